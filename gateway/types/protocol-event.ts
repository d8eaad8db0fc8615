// One indexed on-chain event of a tracked contract.
import { builder } from '../builder.ts';
import { checksummed, EVENT_ARGS_ENCODING, EVENT_ID_ENCODING, eventArgs } from '../event-names.ts';
import { isoFromSeconds } from '../format.ts';
import { eventCursor, type ListedEvent } from '../event-filters.ts';
import { JsonScalar } from './json.ts';

export const ProtocolEventRef = builder.objectRef<ListedEvent>('ProtocolEvent').implement({
  description:
    'A decoded event of a tracked contract (FundRegistry, NavOracle, DividendDistributor, fund vaults).',
  fields: (t) => ({
    id: t.exposeString('id', { description: EVENT_ID_ENCODING }),
    cursor: t.string({
      description:
        'cursor positioned at this event: pass it, with the same filters as the query that listed the event, to continue with older events',
      resolve: eventCursor,
    }),
    contract: t.string({
      description: 'emitting contract address, checksummed (EIP-55) as GET /v1/contracts lists it',
      resolve: (e) => checksummed(e.contract),
    }),
    contractName: t.string({
      nullable: true,
      description:
        "registry name of the emitting contract (a fund vault's is the vault's name); the fund slug for a vault the registry lists only as a fund; null for any other address",
      resolve: (e, _a, ctx) =>
        ctx.registry.contractByAddress.get(e.contract)?.name ??
        ctx.registry.fundByVault.get(e.contract)?.slug ??
        null,
    }),
    fund: t.string({
      nullable: true,
      description:
        "slug of the fund the event concerns: the emitting vault's fund, or the fund a FundRegistry, NavOracle or DividendDistributor event names (args.vault or args.fund); null for an event that concerns no fund (roles and ownership of those contracts) or a fund the registry does not list",
      resolve: (e, _a, ctx) =>
        e.fund === null ? null : (ctx.registry.fundByVault.get(e.fund)?.slug ?? null),
    }),
    eventName: t.exposeString('eventName', {
      description: 'Solidity event name, one of the closed list of the eventName argument of Query.events',
    }),
    blockNumber: t.int({
      description: 'number of the block holding the event',
      resolve: (e) => Number(e.blockNumber),
    }),
    logIndex: t.int({ description: "the log's index in its block", resolve: (e) => Number(e.logIndex) }),
    txHash: t.exposeString('txHash', {
      description: 'hash of the emitting transaction, lowercase 0x 32-byte hex',
    }),
    timestamp: t.string({
      description: 'block time, ISO 8601 UTC with milliseconds',
      resolve: (e) => isoFromSeconds(e.timestamp),
    }),
    args: t.field({
      type: JsonScalar,
      description: `decoded arguments, ${EVENT_ARGS_ENCODING}`,
      resolve: (e) => eventArgs(e.eventName, e.args),
    }),
  }),
});
