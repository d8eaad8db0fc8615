// The event names of the indexed stream (GraphQL `events`, GET /v1/events), a closed list: the
// subgraph records every event it handles as a ProtocolEvent under its Solidity name, and handles
// every event of every contract it tracks (test/subgraph/manifest.test.ts), so the list is read
// from the subgraph's manifest, never written down a second time. Both surfaces' `eventName`
// checks, its documented enum, the event record's schema and the endpoint's description use it.
import { readManifest } from '../subgraph/scripts/manifest.ts';

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

export const EVENT_SOURCES: EventSource[] = readManifest().map((source) => ({
  contract: source.name,
  template: source.template,
  events: source.eventHandlers.map((handler) => nameOf(handler.event)),
}));

/** every event name the stream can carry, each once, in the manifest's order */
export const EVENT_NAMES: readonly string[] = [...new Set(EVENT_SOURCES.flatMap((s) => s.events))];
