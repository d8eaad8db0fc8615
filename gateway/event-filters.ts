// The filters of the indexed event stream (GraphQL `events`, GET /v1/events), checked against what
// the registry, the manifest and the mapping say can occur. A filter that cannot match (a NavOracle
// event asked of a fund vault, a policy contract, which no data source tracks, another fund's vault
// asked with a fund, an event that never concerns a fund asked of one) would answer an empty page,
// which an agent reads as "no such events"; it is refused instead, naming what to ask. A fund filter
// takes the fund's slug and matches every event that concerns the fund, whichever contract emitted
// it. An argument given empty is refused as REST refuses an empty parameter (optionalArgument). The
// filters checked are what an events cursor is bound to (inputs.ts, eventsCursor).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readManifest, subgraphDir } from '../subgraph/manifest.ts';
import { badInput } from './errors.ts';
import { EVENT_NAMES, EVENT_SOURCES, sourceName, type EventSource } from './event-names.ts';
import {
  ADDRESS_RULE,
  checkAddress,
  checkEventName,
  checkRange,
  EVENT_NAME_RULE,
  eventsCursor,
  type EventsFilters,
  MAX_INT,
  optionalArgument,
  slugRule,
  unknownSlugMessage,
} from './inputs.ts';
import type { RegistryFund, RegistryIndex } from './sources/registry.ts';
import type { ProtocolEventRow } from './sources/subgraph.ts';

interface EventFilterArgs {
  contract?: string | null;
  eventName?: string | null;
  fund?: string | null;
  fromBlock?: number | null;
  toBlock?: number | null;
}

/** An event as a page of the stream lists it: with the filters of that listing. */
export type ListedEvent = ProtocolEventRow & { filters: EventsFilters };

/** The cursor positioned at `event`, which continues its listing with the events below it. */
export const eventCursor = (event: ListedEvent): string => eventsCursor(BigInt(event.sortKey), event.filters);

/** `export { a, b } from './protocol-event'` in a mapping file: the handlers it takes from there */
const PROTOCOL_EVENT_REEXPORT = /export\s*\{([^}]*)\}\s*from\s*['"]\.\/protocol-event['"]/g;

/**
 * Per data source, the events whose records name no fund, as the mapping writes them: the handlers
 * a mapping file re-exports from protocol-event.ts (OpenZeppelin's Ownable and AccessControl events
 * of the protocol's own contracts) record their event with no fund; every other handler names one
 * (a vault's own event its vault, a singleton's the fund its arguments name).
 */
const FUNDLESS_EVENTS: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  readManifest().map((source) => {
    const mapping = readFileSync(join(subgraphDir, source.mappingFile), 'utf8');
    const reexported = new Set(
      [...mapping.matchAll(PROTOCOL_EVENT_REEXPORT)].flatMap((m) => m[1]!.split(',').map((n) => n.trim())),
    );
    const events = source.eventHandlers
      .filter((h) => reexported.has(h.handler))
      .map((h) => h.event.slice(0, h.event.indexOf('(')));
    return [source.name, new Set(events)];
  }),
);

/** whether records of `eventName` emitted by `source` name a fund */
const namesFund = (source: EventSource, eventName: string) =>
  source.events.includes(eventName) && !FUNDLESS_EVENTS.get(source.contract)?.has(eventName);

/** the event names no record of which names a fund, whichever contract emits them */
export const EVENTS_NAMING_NO_FUND: readonly string[] = EVENT_NAMES.filter(
  (eventName) => !EVENT_SOURCES.some((source) => namesFund(source, eventName)),
);

/** The data source whose events `contract` emits, as far as the registry knows the address. */
function sourceOf(registry: RegistryIndex, contract: string): EventSource | 'untracked' | undefined {
  const kind = registry.fundByVault.has(contract)
    ? 'FundVault'
    : registry.contractByAddress.get(contract)?.kind;
  if (kind === undefined) return undefined;
  return EVENT_SOURCES.find((source) => source.contract === kind) ?? 'untracked';
}

/** The block range asked for, checked; BAD_INPUT naming the argument that breaks its rule. */
function blockRange(args: EventFilterArgs): Pick<EventsFilters, 'fromBlock' | 'toBlock'> {
  const fromBlock = args.fromBlock ?? undefined;
  const toBlock = args.toBlock ?? undefined;
  if (fromBlock !== undefined) checkRange('fromBlock', fromBlock, 0, MAX_INT);
  if (toBlock !== undefined) checkRange('toBlock', toBlock, 0, MAX_INT);
  if (fromBlock !== undefined && toBlock !== undefined && fromBlock > toBlock) {
    throw badInput(
      'toBlock',
      `toBlock (${toBlock}) must be greater than or equal to fromBlock (${fromBlock}).`,
    );
  }
  return { fromBlock, toBlock };
}

/** The stream's filters, checked; BAD_INPUT naming the argument when one cannot match. */
export function eventFilter(registry: RegistryIndex, args: EventFilterArgs): EventsFilters {
  const { fromBlock, toBlock } = blockRange(args);
  const contractGiven = optionalArgument('contract', args.contract, ADDRESS_RULE);
  const contract = contractGiven === undefined ? undefined : checkAddress('contract', contractGiven);
  const eventNameGiven = optionalArgument('eventName', args.eventName, EVENT_NAME_RULE);
  const eventName = eventNameGiven === undefined ? undefined : checkEventName('eventName', eventNameGiven);
  const slug = optionalArgument('fund', args.fund, slugRule('fund'));
  let fund: RegistryFund | undefined;
  if (slug !== undefined) {
    fund = registry.fundBySlug.get(slug);
    if (!fund) throw badInput('fund', unknownSlugMessage('fund', slug, registry.fundBySlug));
  }
  // the data source of the contract asked for, when the registry knows it
  let source: EventSource | undefined;
  if (contract !== undefined) {
    const found = sourceOf(registry, contract);
    const name = registry.contractByAddress.get(contract)?.name ?? registry.fundByVault.get(contract)?.name;
    const tracked = EVENT_SOURCES.map(sourceName).join(', ');
    if (found === 'untracked') {
      const instead = fund
        ? `Leave contract out: fund "${fund.slug}" already selects every event concerning that fund.`
        : 'To follow one fund, filter by fund (its slug) instead.';
      throw badInput(
        'contract',
        `${name} (${contract}) emits no indexed events: events are indexed for ${tracked}. ${instead}`,
      );
    }
    source = found;
    if (source !== undefined && eventName !== undefined && !source.events.includes(eventName)) {
      const emitters = EVENT_SOURCES.filter((s) => s.events.includes(eventName)).map(sourceName);
      throw badInput(
        'eventName',
        `${name} (${contract}) never emits ${eventName}: its events are ${source.events.join(', ')}. ${eventName} is emitted by ${emitters.join(' and ')}; to get one fund's, filter by fund (its slug) instead of contract.`,
      );
    }
    const owner = registry.fundByVault.get(contract);
    if (fund && owner && owner.slug !== fund.slug) {
      throw badInput(
        'contract',
        `${name} (${contract}) is the vault of fund ${owner.slug}, so none of its events concerns fund ${fund.slug}: leave contract out to get every event of ${fund.slug}, or ask for fund "${owner.slug}".`,
      );
    }
  }
  if (fund && eventName !== undefined) {
    // the sources that may have emitted the events asked for: the contract's, or all of them
    const emitters = source === undefined ? EVENT_SOURCES : [source];
    if (!emitters.some((s) => namesFund(s, eventName))) {
      const of = source === undefined ? '' : ` of ${sourceName(source)}`;
      throw badInput(
        'fund',
        `No ${eventName} event${of} concerns a fund (it is about the contract that emits it), so fund "${fund.slug}" would match none: leave fund out to list ${eventName} events, or leave eventName out to list every event of ${fund.slug}.`,
      );
    }
  }
  return { contract, eventName, fund: fund?.vault.toLowerCase(), fromBlock, toBlock };
}
