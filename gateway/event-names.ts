// The event names of the indexed stream (GraphQL `events`, GET /v1/events), a closed list: the
// subgraph records every event it handles as a ProtocolEvent under its Solidity name, and handles
// every event of every contract it tracks (test/subgraph/manifest.test.ts), so the list is read
// from the subgraph's manifest (subgraph/manifest.ts), never written down a second time. Both
// surfaces' `eventName` checks, its documented enum, the event record's schema and the endpoint's
// description use it; both surfaces also describe the records' id and args in the words defined here.
// The sources' ABIs say which arguments are addresses: the subgraph stores them as graph-ts writes
// them, lowercase, and the API gives every address checksummed (EIP-55) as /v1/contracts does, so an
// agent comparing an event's address with another response's compares equal strings.
import { getAddress } from 'viem';
import { abiPath, readAbi, readManifest } from '../subgraph/manifest.ts';

export interface EventSource {
  /** data source or template name, e.g. NavOracle, FundVault */
  contract: string;
  /** a template: one instance per fund vault */
  template: boolean;
  /** Solidity event names, in the manifest's order */
  events: string[];
}

/** `NavPublished(indexed address,indexed uint64,uint256)` -> `NavPublished` */
const nameOf = (signature: string) => signature.slice(0, signature.indexOf('('));

const MANIFEST = readManifest();

export const EVENT_SOURCES: EventSource[] = MANIFEST.map((source) => ({
  contract: source.name,
  template: source.template,
  events: source.eventHandlers.map((handler) => nameOf(handler.event)),
}));

/**
 * Per event name, the names of its address parameters, from the ABIs the sources are decoded with.
 * Keyed by name alone as the stream's rows are: two contracts' events of one name must agree on
 * which parameters are addresses, which a start-up error says otherwise.
 */
const ADDRESS_PARAMS: ReadonlyMap<string, readonly string[]> = (() => {
  const params = new Map<string, readonly string[]>();
  for (const source of MANIFEST) {
    for (const item of readAbi(source)) {
      if (item.type !== 'event') continue;
      const addresses = item.inputs.flatMap((input) =>
        input.type === 'address' && input.name ? [input.name] : [],
      );
      const known = params.get(item.name);
      if (known && known.join() !== addresses.join()) {
        throw new Error(
          `${abiPath(source)}: event ${item.name} has address parameters (${addresses.join(', ')}) other than another ABI's event of that name (${known.join(', ')})`,
        );
      }
      params.set(item.name, addresses);
    }
  }
  return params;
})();

/** A stored address (lowercase, as the subgraph writes it) as the API gives it: checksummed. */
export const checksummed = (address: string): string => getAddress(address);

/** An event's stored args with its address arguments checksummed. */
export function eventArgs(eventName: string, stored: string): Record<string, unknown> {
  const args = JSON.parse(stored) as Record<string, unknown>;
  for (const name of ADDRESS_PARAMS.get(eventName) ?? []) {
    const value = args[name];
    if (typeof value === 'string') args[name] = checksummed(value);
  }
  return args;
}

/** every event name the stream can carry, each once, in the manifest's order */
export const EVENT_NAMES: readonly string[] = [...new Set(EVENT_SOURCES.flatMap((s) => s.events))];

/** "FundRegistry", or "each fund vault (FundVault)" for the template */
export const sourceName = (source: EventSource): string =>
  source.template ? `each fund vault (${source.contract})` : source.contract;

/** "FundRegistry: FundRegistered, OwnershipTransferred; ...; each fund vault (FundVault): ..." */
export const EVENT_NAMES_BY_CONTRACT = EVENT_SOURCES.map(
  (s) => `${sourceName(s)}: ${s.events.join(', ')}`,
).join('; ');

/** a record's id, as the subgraph builds it (subgraph/src/entity-ids.ts) */
export const EVENT_ID_ENCODING =
  'transaction hash ++ log index as 4 bytes little-endian, lowercase 0x hex: the 64 hex digits of txHash, then 8 (log index 7 ends in 07000000)';

/**
 * a record's args, as the subgraph encodes them (subgraph/src/protocol-event.ts): the chain's raw
 * integers, which an agent would otherwise take for the decimal strings the rest of the API gives
 */
export const EVENT_ARGS_ENCODING =
  "keyed by the ABI's parameter names. Integers are decimal strings of the raw on-chain value, not decimal-scaled as amounts elsewhere in the API: token amounts in base units (10^decimals per token), navPerShare with 6 implied decimals (1000612 = 1.000612), an enum or module number as its numeric value (ModulePaused.module: 0 subscriptions, 1 redemptions, 2 claims). Addresses are checksummed (EIP-55) as everywhere in the API, bytes are lowercase 0x hex, bools are booleans, arrays and tuples are arrays";

/** `nav_published`, `nav-published`, `Nav Published`, `navpublished` -> `navpublished` */
const spelling = (name: string) => name.replace(/[\s_-]+/g, '').toLowerCase();

/**
 * The name of a closed list (the event names) that `value` writes in another case or with separators
 * (snake_case, kebab-case, spaces), as an agent guessing at a Solidity name writes it; undefined when
 * it writes none of them.
 */
export function nameMeant(names: readonly string[], value: string): string | undefined {
  return names.find((name) => spelling(name) === spelling(value));
}
