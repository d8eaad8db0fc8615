// One indexed on-chain event of a tracked contract.
import { builder } from '../builder.ts';
import { isoFromSeconds } from '../format.ts';
import { encodeCursor } from '../inputs.ts';
import type { ProtocolEventRow } from '../sources/subgraph.ts';
import { JsonScalar } from './json.ts';

export const ProtocolEventRef = builder.objectRef<ProtocolEventRow>('ProtocolEvent').implement({
  description:
    'A decoded event of a tracked contract (FundRegistry, NavOracle, DividendDistributor, fund vaults).',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'transaction hash ++ log index' }),
    cursor: t.string({
      description: 'cursor positioned at this event: pass it to continue with older events',
      resolve: (e) => encodeCursor('e', BigInt(e.sortKey)),
    }),
    contract: t.exposeString('contract', { description: 'emitting contract address (lowercase)' }),
    contractName: t.string({
      nullable: true,
      description:
        'registry name of the emitting contract (a fund vault\'s is the vault\'s name, e.g. "Harbor Stable Yield Vault"); the fund slug for a vault the registry lists only as a fund; null for any other address',
      resolve: (e, _a, ctx) =>
        ctx.registry.contractByAddress.get(e.contract)?.name ??
        ctx.registry.fundByVault.get(e.contract)?.slug ??
        null,
    }),
    eventName: t.exposeString('eventName'),
    blockNumber: t.int({ resolve: (e) => Number(e.blockNumber) }),
    logIndex: t.int({ resolve: (e) => Number(e.logIndex) }),
    txHash: t.exposeString('txHash'),
    timestamp: t.string({ description: 'block time, ISO 8601', resolve: (e) => isoFromSeconds(e.timestamp) }),
    args: t.field({
      type: JsonScalar,
      description: 'decoded arguments by name; integers as decimal strings, bytes and addresses as 0x hex',
      resolve: (e) => JSON.parse(e.args) as unknown,
    }),
  }),
});
