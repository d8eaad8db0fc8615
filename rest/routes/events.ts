// The events route on its own: the one route over every tracked contract rather than one
// resource, with filters (contract, event name, block range) no other route takes.
import { ADDRESS_PATTERN, MAX_INT } from '../../gateway/inputs.ts';
import { EVENT_NAMES, EVENT_NAMES_BY_CONTRACT } from '../../gateway/event-names.ts';
import type { DocumentExamples } from '../examples.ts';
import type { ParamSpec, RouteSpec } from '../routes.ts';
import { cursorParam, limitParam } from './shared-params.ts';

/** `example`: a block the devnet scenario holds events at or before */
const blockParam = (name: string, description: string, example: number | undefined): ParamSpec => ({
  name,
  in: 'query',
  description,
  schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
  rule: `an integer block number from 0 to ${MAX_INT}`,
  example,
});

export function listEventsRoute({ contract, scenario }: DocumentExamples): RouteSpec {
  return {
    operationId: 'listEvents',
    path: '/v1/events',
    summary: 'Indexed on-chain events',
    description: `Events of every tracked contract (FundRegistry, NavOracle, DividendDistributor, fund vaults), newest first by (block, log index). Cursor paging is stable: new events never shift or repeat pages already read. Every event of these contracts is indexed, so \`eventName\` is one of a closed list, by emitting contract: ${EVENT_NAMES_BY_CONTRACT}. Any other \`eventName\` is refused with 400; one written in another case or with separators (nav_published) gets a 400 naming the event meant.`,
    tier: 'live',
    params: [
      {
        name: 'contract',
        in: 'query',
        description: 'emitting contract address (any case), from GET /v1/contracts',
        schema: { type: 'string', pattern: ADDRESS_PATTERN },
        rule: 'a 0x-prefixed address of 40 hex digits',
        example: contract.address,
      },
      {
        name: 'eventName',
        in: 'query',
        description: 'name of the event',
        schema: { type: 'string', enum: EVENT_NAMES },
        rule: `one of these event names, exactly as written (case-sensitive): ${EVENT_NAMES.join(', ')}`,
        example: 'NavPublished',
      },
      blockParam('fromBlock', 'lowest block, inclusive', scenario && 1),
      blockParam('toBlock', 'highest block, inclusive; must be >= fromBlock', scenario && 500),
      limitParam('events'),
      cursorParam(scenario?.eventsCursor),
    ],
    document: `query($contract: String, $eventName: String, $fromBlock: Int, $toBlock: Int, $limit: Int, $cursor: String) {
      events(contract: $contract, eventName: $eventName, fromBlock: $fromBlock, toBlock: $toBlock, limit: $limit, cursor: $cursor) {
        items { id contract contractName eventName blockNumber logIndex txHash timestamp args } nextCursor } }`,
    toBody: (d) => ({
      items: d.events.items,
      count: d.events.items.length,
      nextCursor: d.events.nextCursor,
    }),
    responseSchema: 'EventPage',
    example: scenario && {
      items: [scenario.event],
      count: 1,
      nextCursor: scenario.eventsCursor,
    },
  };
}
