// The filters of the indexed event stream (GraphQL `events`, GET /v1/events), checked against what
// the registry and the manifest say can occur. A filter that cannot match (a NavOracle event asked
// of a fund vault, a policy contract, which no data source tracks) would answer an empty page, which
// an agent reads as "no such events"; it is refused instead, naming what to ask. A fund filter takes
// the fund's slug and matches every event that concerns the fund, whichever contract emitted it.
import { badInput } from './errors.ts';
import { EVENT_SOURCES, sourceName, type EventSource } from './event-names.ts';
import { checkAddress, checkEventName, unknownSlugMessage } from './inputs.ts';
import type { RegistryIndex } from './sources/registry.ts';

interface EventFilterArgs {
  contract?: string | null;
  eventName?: string | null;
  fund?: string | null;
}

interface EventFilter {
  /** lowercase address */
  contract?: string;
  eventName?: string;
  /** the fund's vault, lowercase */
  fund?: string;
}

/** The data source whose events `contract` emits, as far as the registry knows the address. */
function sourceOf(registry: RegistryIndex, contract: string): EventSource | 'untracked' | undefined {
  const kind = registry.fundByVault.has(contract)
    ? 'FundVault'
    : registry.contractByAddress.get(contract)?.kind;
  if (kind === undefined) return undefined;
  return EVENT_SOURCES.find((source) => source.contract === kind) ?? 'untracked';
}

/** The stream's filters, checked; BAD_INPUT naming the argument when one cannot match. */
export function eventFilter(registry: RegistryIndex, args: EventFilterArgs): EventFilter {
  const contract = args.contract ? checkAddress('contract', args.contract) : undefined;
  const eventName = args.eventName ? checkEventName('eventName', args.eventName) : undefined;
  let fund: string | undefined;
  if (args.fund) {
    const entry = registry.fundBySlug.get(args.fund);
    if (!entry) {
      throw badInput('fund', unknownSlugMessage('fund', args.fund, registry.fundBySlug));
    }
    fund = entry.vault.toLowerCase();
  }
  if (contract !== undefined) {
    const source = sourceOf(registry, contract);
    const name = registry.contractByAddress.get(contract)?.name ?? registry.fundByVault.get(contract)?.name;
    const tracked = EVENT_SOURCES.map(sourceName).join(', ');
    if (source === 'untracked') {
      throw badInput(
        'contract',
        `${name} (${contract}) emits no indexed events: events are indexed for ${tracked}. To follow one fund, filter by fund (its slug) instead.`,
      );
    }
    if (source !== undefined && eventName !== undefined && !source.events.includes(eventName)) {
      const emitters = EVENT_SOURCES.filter((s) => s.events.includes(eventName)).map(sourceName);
      throw badInput(
        'eventName',
        `${name} (${contract}) never emits ${eventName}: its events are ${source.events.join(', ')}. ${eventName} is emitted by ${emitters.join(' and ')}; to get one fund's, filter by fund (its slug) instead of contract.`,
      );
    }
  }
  return { contract, eventName, fund };
}
