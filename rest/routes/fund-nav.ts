// Routes of a fund's NAV: the latest published record and the history of records of every
// status. Both answer with the same NAV record. A history is at most `limit` records, so a range
// longer than that is answered in parts: each part's Link rel="next" asks for the rest.
import { notFound } from '../../gateway/errors.ts';
import { MAX_INT, NAV_HISTORY_LIMIT } from '../../gateway/inputs.ts';
import type { DocumentExamples } from '../examples.ts';
import type { ParamValues } from '../params.ts';
import type { Data, RouteSpec } from '../routes.ts';
import { slugParam } from './shared-params.ts';

// the NAV fields the documents ask for and the bodies return, in this order: one list, so what
// is asked and what is returned cannot drift apart
const NAV_KEYS = [
  'epoch',
  'navPerShare',
  'totalAssets',
  'totalSupply',
  'settledAt',
  'publishedAt',
  'status',
  'onchainTxHash',
] as const;
const NAV_FIELDS = NAV_KEYS.join(' ');
const pickNav = (nav: Data) => Object.fromEntries(NAV_KEYS.map((key) => [key, nav[key]]));

/** when a NAV history answer links the rest of its range, and what the link asks for */
const NAV_HISTORY_REST =
  'when the range asked holds more epochs than the answer\'s `limit`: the same request for the rest of the range, the epochs after the answer\'s last one with `from` (up to `to`), or, without `from`, those before its first one; following each rel="next" until an answer has none gives the whole range';

/**
 * The request for the epochs of the range asked that the answer left out, or null when it holds
 * them all. With `from` the range runs up to `to` or the highest epoch the fund has a record of
 * (its latestRecordedNav); without, down to epoch 1, the NavOracle's first.
 */
function navHistoryRest({ fund }: Data, values: ParamValues): string | null {
  const points: { epoch: number }[] = fund.navHistory;
  const latestEpoch: number | undefined = fund.latestRecordedNav?.epoch;
  const limit = Number(values.limit);
  const [first, last] = [points[0], points.at(-1)];
  if (points.length < limit || first === undefined || last === undefined) return null;
  const path = `/v1/funds/${fund.slug}/nav/history`;
  if (values.from === undefined)
    return first.epoch > 1 ? `${path}?to=${first.epoch - 1}&limit=${limit}` : null;
  const to = values.to === undefined ? undefined : Number(values.to);
  if (last.epoch >= Math.min(to ?? MAX_INT, latestEpoch ?? last.epoch)) return null;
  return `${path}?from=${last.epoch + 1}${to === undefined ? '' : `&to=${to}`}&limit=${limit}`;
}

export function getLatestNavRoute(examples: DocumentExamples): RouteSpec {
  const { fund, scenario } = examples;
  return {
    operationId: 'getLatestNav',
    path: '/v1/funds/{slug}/nav',
    summary: 'Latest published NAV of a fund',
    description:
      'The NAV record of the highest Published epoch. Records still in Draft, PendingVerification or Verified appear in the NAV history.',
    tier: 'latest-nav',
    params: [slugParam('fund', examples)],
    document: `query($slug: String!) { fund(slug: $slug) { slug latestNav { ${NAV_FIELDS} } } }`,
    toBody: (d) => {
      if (!d.fund.latestNav) throw notFound(`Fund ${d.fund.slug} has no published NAV yet.`);
      return { fund: d.fund.slug, nav: pickNav(d.fund.latestNav) };
    },
    responseSchema: 'LatestNav',
    notFoundWhen: 'the slug names no fund, or the fund has no published NAV yet',
    example: scenario && { fund: fund.slug, nav: scenario.latestNav },
  };
}

export function getNavHistoryRoute(examples: DocumentExamples): RouteSpec {
  const { fund, scenario } = examples;
  return {
    operationId: 'getNavHistory',
    path: '/v1/funds/{slug}/nav/history',
    summary: 'NAV history of a fund',
    description: `NAV records of every status, ascending by epoch, at most \`limit\` points: a range with more epochs is answered in parts, and each part that leaves epochs of the range out carries a Link header with rel="next" naming the request for the rest (follow it until none comes). Without parameters: the last ${NAV_HISTORY_LIMIT.default} epochs (rel="next": the ones before). With \`from\`: the first \`limit\` epochs from \`from\` (up to \`to\`). With only \`to\`: the last \`limit\` epochs up to \`to\`. settledAt dates each epoch (epoch numbers are per fund).`,
    tier: 'history',
    params: [
      slugParam('fund', examples),
      {
        name: 'from',
        in: 'query',
        description: 'start epoch, inclusive',
        schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
        rule: `an integer from 0 to ${MAX_INT}`,
        example: scenario?.navs[0].epoch,
      },
      {
        name: 'to',
        in: 'query',
        description: 'end epoch, inclusive; must be >= from',
        schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
        // `to` below `from` is refused by the query with its own detail naming both values
        rule: `an integer from 0 to ${MAX_INT}`,
        example: scenario?.navs[2].epoch,
      },
      {
        name: 'limit',
        in: 'query',
        description: 'maximum number of points',
        schema: {
          type: 'integer',
          minimum: NAV_HISTORY_LIMIT.minimum,
          maximum: NAV_HISTORY_LIMIT.maximum,
          default: NAV_HISTORY_LIMIT.default,
        },
        rule: `an integer from ${NAV_HISTORY_LIMIT.minimum} to ${NAV_HISTORY_LIMIT.maximum}`,
        example: 30,
      },
    ],
    document: `query($slug: String!, $from: Int, $to: Int, $limit: Int) { fund(slug: $slug) { slug
      navHistory(from: $from, to: $to, limit: $limit) { ${NAV_FIELDS} } latestRecordedNav { epoch } } }`,
    toBody: (d) => ({ fund: d.fund.slug, points: d.fund.navHistory.map(pickNav) }),
    nextPage: { rule: NAV_HISTORY_REST, request: navHistoryRest },
    responseSchema: 'NavHistory',
    notFoundWhen: 'the slug names no fund',
    example: scenario && { fund: fund.slug, points: scenario.navs },
  };
}
