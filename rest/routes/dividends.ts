// Routes of a fund's dividend rounds: the paged list, one round, and the Merkle proof a holder
// claims with. The epoch of a round is the key the last two share.
import { MAX_INT } from '../../gateway/inputs.ts';
import {
  CLAIM_REVERTS,
  CLAIM_SENDER,
  CLAIM_SIGNATURE,
  CLAIMED_FRESHNESS,
} from '../../gateway/claim-function.ts';
import type { DocumentExamples } from '../examples.ts';
import type { ParamSpec, RouteSpec } from '../routes.ts';
import { addressParam, cursorParam, limitParam, slugParam } from './shared-params.ts';

const ROUND_FIELDS =
  'fund epoch merkleRoot total leafCount uri claimedCount claimedAmount postedAt postedBlock postedTxHash';

const epochParam = (examples: DocumentExamples): ParamSpec => ({
  name: 'epoch',
  in: 'path',
  description: 'settlement epoch of the round, from GET /v1/funds/{slug}/dividends',
  schema: { type: 'integer', minimum: 0, maximum: MAX_INT },
  rule: `an integer from 0 to ${MAX_INT}: a daily settlement epoch number, counted per fund from 1, not a date (GET /v1/funds/{slug}/dividends lists the rounds' epochs; GET /v1/funds/{slug}/nav/history dates each epoch by settledAt, the time of its settlement)`,
  example: examples.scenario?.round.epoch,
});

export function listDividendRoundsRoute(examples: DocumentExamples): RouteSpec {
  const { fund, scenario } = examples;
  return {
    operationId: 'listDividendRounds',
    path: '/v1/funds/{slug}/dividends',
    summary: 'Dividend rounds of a fund',
    description:
      'Rounds newest epoch first, cursor paging: pass `nextCursor` back as `cursor` until it is null.',
    tier: 'history',
    params: [slugParam('fund', examples), limitParam('rounds'), cursorParam(scenario?.dividendsCursor)],
    document: `query($slug: String!, $limit: Int, $cursor: String) { fund(slug: $slug) { slug
      dividends(limit: $limit, cursor: $cursor) { items { ${ROUND_FIELDS} } nextCursor } } }`,
    toBody: (d) => ({
      fund: d.fund.slug,
      items: d.fund.dividends.items,
      count: d.fund.dividends.items.length,
      nextCursor: d.fund.dividends.nextCursor,
    }),
    responseSchema: 'DividendRoundPage',
    notFoundWhen: 'the slug names no fund',
    example: scenario && { fund: fund.slug, items: [scenario.round], count: 1, nextCursor: null },
  };
}

export function getDividendRoundRoute(examples: DocumentExamples): RouteSpec {
  const { scenario } = examples;
  return {
    operationId: 'getDividendRound',
    path: '/v1/funds/{slug}/dividends/{epoch}',
    summary: 'One dividend round',
    description: 'The Merkle root, total and leaf count of one round, with its claim progress.',
    tier: 'history',
    params: [slugParam('fund', examples), epochParam(examples)],
    document: `query($slug: String!, $epoch: Int!) { fund(slug: $slug) { dividend(epoch: $epoch) { ${ROUND_FIELDS} } } }`,
    toBody: (d) => ({ data: d.fund.dividend }),
    responseSchema: 'DividendRoundDetail',
    notFoundWhen: 'the slug names no fund, or the fund has no round for the epoch',
    example: scenario && { data: scenario.round },
  };
}

export function getDividendProofRoute(examples: DocumentExamples): RouteSpec {
  const { scenario } = examples;
  return {
    operationId: 'getDividendProof',
    path: '/v1/funds/{slug}/dividends/{epoch}/proof',
    summary: 'Merkle proof to claim a dividend',
    description: `The proof for \`address\`, computed from the round's distribution after checking that its root equals the on-chain root, and \`claim\`: the DividendDistributor.claim transaction that pays it (${CLAIM_SIGNATURE}), with its selector, ordered arguments and calldata, ready to send as \`to\` and \`data\`. ${CLAIM_SENDER}. ${CLAIM_REVERTS}. ${CLAIMED_FRESHNESS}.`,
    tier: 'history',
    params: [
      slugParam('fund', examples),
      epochParam(examples),
      { ...addressParam('address', 'the account to prove', scenario?.proof.account), required: true },
    ],
    document: `query($slug: String!, $epoch: Int!, $address: String!) { fund(slug: $slug) { dividend(epoch: $epoch) {
      proof(address: $address) { fund vault epoch account amount amountRaw merkleRoot leaf proof claimed distributor
        claim { to signature selector args { name type value } data } } } } }`,
    toBody: (d) => ({ data: d.fund.dividend.proof }),
    responseSchema: 'MerkleProofDetail',
    notFoundWhen:
      'the slug names no fund, the fund has no round for the epoch, the address is not a recipient of the round (it has no leaf in it), or this deployment serves no proofs (it has no distribution files)',
    example: scenario && { data: scenario.proof },
  };
}
