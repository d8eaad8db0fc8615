// The events route on its own: the one route over every tracked contract rather than one
// resource, with filters (contract, event name, fund, block range) no other route takes, which its
// cursors are bound to.
import {
  EVENT_NAME_RULE,
  eventsCursor,
  MAX_INT,
  SAME_EVENTS_FILTERS,
  SLUG_PATTERN,
  SLUG_RULE,
} from '../../gateway/inputs.ts';
import { eventFilter, EVENTS_NAMING_NO_FUND } from '../../gateway/event-filters.ts';
import { indexRegistry } from '../../gateway/sources/registry.ts';
import { EVENT_NAMES, EVENT_NAMES_BY_CONTRACT } from '../../gateway/event-names.ts';
import type { DocumentExamples } from '../examples.ts';
import type { ParamSpec, RouteSpec } from '../routes.ts';
import { addressParam, cursorParam, limitParam } from './shared-params.ts';

/** `example`: a block the devnet scenario holds events at or before */
const blockParam = (name: string, description: string, example: number | undefined): ParamSpec => ({
  name,
  in: 'query',
  description,
  schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
  rule: `an integer block number from 0 to ${MAX_INT}`,
  example,
});

/** the example eventName (on any network) and block range (on the devnet scenario) */
const EXAMPLE_EVENT_NAME = 'NavPublished';
const EXAMPLE_BLOCKS = { fromBlock: 1, toBlock: 500 };

export function listEventsRoute({ registry, contract, fund, scenario }: DocumentExamples): RouteSpec {
  // the nextCursor of the request of every example parameter, whose filters it is bound to
  const exampleCursor = (event: { blockNumber: number; logIndex: number }) =>
    eventsCursor(
      (BigInt(event.blockNumber) << 32n) + BigInt(event.logIndex),
      eventFilter(indexRegistry(registry), {
        contract: contract.address,
        eventName: EXAMPLE_EVENT_NAME,
        fund: fund.slug,
        ...EXAMPLE_BLOCKS,
      }),
    );
  return {
    operationId: 'listEvents',
    path: '/v1/events',
    summary: 'Indexed on-chain events',
    description: `Events of every tracked contract (FundRegistry, NavOracle, DividendDistributor, fund vaults), newest first by (block, log index). Cursor paging is stable: new events never shift or repeat pages already read. Every event of these contracts is indexed, so \`eventName\` is one of a closed list, by emitting contract: ${EVENT_NAMES_BY_CONTRACT}. Any other \`eventName\` is refused with 400; one written in another case or with separators (nav_published) gets a 400 naming the event meant. \`fund\` (a fund slug) selects the events that concern one fund whichever contract emitted them (its vault's, and the NavOracle, DividendDistributor and FundRegistry events naming it): \`fund=<slug>&eventName=NavPublished\` lists one fund's NAV publications. A \`contract\` and \`eventName\` that cannot occur together (NavPublished of a fund vault), or a registered contract no event is indexed for (a policy, a share token), are refused with 400 naming what to ask instead, never answered with an empty page; so are \`fund\` with another fund's vault as \`contract\`, and \`fund\` with an \`eventName\` no record of which names a fund (${EVENTS_NAMING_NO_FUND.join(', ')}; the FundRegistry's OwnershipTransferred), and an empty value for any parameter. A \`nextCursor\` continues only the listing that returned it: send it with ${SAME_EVENTS_FILTERS} as the request that returned it; under other filters it is refused with 400. Only indexed blocks have events here: a block past the answer's X-Indexed-Block holds none yet, so an empty page for a range past it says nothing about those blocks; poll until X-Indexed-Block reaches them.`,
    tier: 'live',
    params: [
      addressParam(
        'contract',
        'emitting contract address (any case), from GET /v1/contracts',
        contract.address,
      ),
      {
        name: 'eventName',
        in: 'query',
        description: 'name of the event',
        schema: { type: 'string', enum: EVENT_NAMES },
        rule: EVENT_NAME_RULE,
        example: EXAMPLE_EVENT_NAME,
      },
      {
        name: 'fund',
        in: 'query',
        description:
          'fund slug, from GET /v1/funds: only the events that concern this fund, whichever contract emitted them',
        schema: { type: 'string', pattern: SLUG_PATTERN, maxLength: 64 },
        rule: `a fund slug from GET /v1/funds (${SLUG_RULE})`,
        example: fund.slug,
        names: 'fund',
      },
      blockParam(
        'fromBlock',
        "lowest block, inclusive. Blocks past the answer's X-Indexed-Block are not indexed yet and hold no events here: an empty page for them says nothing about them",
        scenario && EXAMPLE_BLOCKS.fromBlock,
      ),
      blockParam(
        'toBlock',
        "highest block, inclusive; must be >= fromBlock. Blocks past the answer's X-Indexed-Block hold no events here yet, whatever the chain holds",
        scenario && EXAMPLE_BLOCKS.toBlock,
      ),
      limitParam('events'),
      // no example: a cursor is bound to the filters of its request, and the documented requests
      // give the examples alone and together
      cursorParam(undefined, SAME_EVENTS_FILTERS),
    ],
    document: `query($contract: String, $eventName: String, $fund: String, $fromBlock: Int, $toBlock: Int, $limit: Int, $cursor: String) {
      events(contract: $contract, eventName: $eventName, fund: $fund, fromBlock: $fromBlock, toBlock: $toBlock, limit: $limit, cursor: $cursor) {
        items { id contract contractName fund eventName blockNumber logIndex txHash timestamp args } nextCursor } }`,
    toBody: (d) => ({
      items: d.events.items,
      count: d.events.items.length,
      nextCursor: d.events.nextCursor,
    }),
    responseSchema: 'EventPage',
    example: scenario && {
      items: [scenario.event],
      count: 1,
      nextCursor: exampleCursor(scenario.event),
    },
  };
}
