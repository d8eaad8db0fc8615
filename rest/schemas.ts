// JSON Schemas (OpenAPI 3.1 / JSON Schema 2020-12) of every REST response body. They are
// the components of openapi.json, and the test suite validates every response against them,
// so a body that drifts from the documented contract fails a test.
import { DEFAULT_HEALTH_MAX_LAG_BLOCKS } from '../gateway/context.ts';
import { EVENT_ARGS_ENCODING, EVENT_ID_ENCODING, EVENT_NAMES } from '../gateway/event-names.ts';
import { ADDRESS_PATTERN } from '../gateway/inputs.ts';
import { POLICY_KINDS } from '../gateway/sources/registry.ts';
import { NAV_STATUSES } from '../gateway/sources/subgraph.ts';
import { ALLOCATION_RULE } from '../gateway/types/allocations.ts';
import { CLAIM_SENDER, CLAIM_SIGNATURE } from '../gateway/claim-function.ts';
import { FIXED_PLUS_FLOAT_PARAMS } from '../gateway/types/fixed-plus-float-params.ts';
import { FRACTIONAL_KELLY_PARAMS } from '../gateway/types/fractional-kelly-params.ts';
import { FUND_STATUS_MEANINGS } from '../gateway/types/fund-status.ts';
import {
  NAV_EPOCH_MEANING,
  NAV_PUBLISHED_AT_MEANING,
  NAV_SETTLED_AT_MEANING,
} from '../gateway/types/nav-record.ts';
import { NAV_STATUSES_DESCRIBED } from '../gateway/types/nav-status.ts';
import type { PolicyParamsTable } from '../gateway/types/policy-params-object.ts';
import { RESERVE_OVER_ASSETS } from '../gateway/types/reserve.ts';

export type JsonSchema = Record<string, unknown>;

const string = { type: 'string' };
const integer = { type: 'integer' };
const boolean = { type: 'boolean' };
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });
const address = { type: 'string', pattern: ADDRESS_PATTERN, description: '0x-prefixed address' };
const hash = { type: 'string', pattern: '^0x[0-9a-fA-F]{64}$' };
const decimal = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$', description: 'decimal string, exact' };
const dateTime = { type: 'string', format: 'date-time', description: 'ISO 8601 UTC with milliseconds' };
const date = { type: 'string', format: 'date', description: 'YYYY-MM-DD' };
const uri = { type: 'string', format: 'uri' };
const bps = { type: 'integer', minimum: 0, maximum: 10000, description: 'basis points' };
const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** every listed property required, nothing else allowed */
function object(properties: Record<string, JsonSchema>, description?: string): JsonSchema {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    additionalProperties: false,
    required: Object.keys(properties),
    properties,
  };
}

/** a list body: its items, each of the schema named `item`, and their count */
const list = (item: string): JsonSchema =>
  object({ items: { type: 'array', items: ref(item) }, count: { ...integer, minimum: 0 } });

const navPerShare = { ...decimal, pattern: '^\\d+\\.\\d{6}$', description: 'decimal with 6 decimal places' };
const navRecord = object(
  {
    epoch: { ...integer, minimum: 0, description: NAV_EPOCH_MEANING },
    navPerShare,
    totalAssets: { ...decimal, description: 'assets under management in the base asset' },
    totalSupply: { ...nullable(decimal), description: 'shares outstanding' },
    settledAt: { ...nullable(dateTime), description: NAV_SETTLED_AT_MEANING },
    publishedAt: { ...nullable(dateTime), description: NAV_PUBLISHED_AT_MEANING },
    status: { enum: NAV_STATUSES, description: NAV_STATUSES_DESCRIBED },
    onchainTxHash: {
      ...nullable(hash),
      description: 'hash of the publishing transaction; null until Published',
    },
  },
  'The NAV of a fund for one epoch.',
);

/**
 * A policy's parameters, described in GraphQL's words (`params`); each is basis points unless
 * `ranges` gives its own bounds.
 */
function policyParams(params: PolicyParamsTable, ranges: Record<string, JsonSchema> = {}): JsonSchema {
  const properties = Object.entries(params.fields).map(([name, description]) => [
    name,
    { ...(ranges[name] ?? bps), description },
  ]);
  return object(Object.fromEntries(properties), params.description);
}

const fixedPlusFloatParams = policyParams(FIXED_PLUS_FLOAT_PARAMS);
const fractionalKellyParams = policyParams(FRACTIONAL_KELLY_PARAMS, {
  expectedEdgeBps: { ...integer, minimum: 0 },
  varianceBps: { ...integer, minimum: 1 },
});

const dividendRound = object(
  {
    fund: { ...string, description: 'fund slug' },
    epoch: { ...integer, minimum: 0 },
    merkleRoot: hash,
    total: { ...decimal, description: 'sum of all leaves in the base asset' },
    leafCount: { ...integer, minimum: 0 },
    uri: {
      ...string,
      description:
        "path of the round's distribution file (an OpenZeppelin StandardMerkleTree dump) as posted on-chain, relative to the service's own distribution base, which this API does not serve: get an account's proof from GET /v1/funds/{slug}/dividends/{epoch}/proof instead",
    },
    claimedCount: { ...integer, minimum: 0 },
    claimedAmount: decimal,
    postedAt: dateTime,
    postedBlock: { ...integer, minimum: 0 },
    postedTxHash: hash,
  },
  'A dividend round: a Merkle root over [address, uint256] leaves for one fund and epoch.',
);

const claimCall = object(
  {
    to: { ...address, description: "the DividendDistributor's address: the transaction's `to`" },
    signature: {
      ...string,
      const: CLAIM_SIGNATURE,
      description: `${CLAIM_SIGNATURE}, the function's canonical signature: epoch is a uint64, amount a uint256 in base units`,
    },
    selector: {
      ...string,
      pattern: '^0x[0-9a-f]{8}$',
      description: "the function's 4-byte selector: the first 4 bytes of `data`",
    },
    args: {
      type: 'array',
      description: 'the arguments in order: fund (the vault), epoch, account, amount (amountRaw), proof',
      items: object({
        name: { ...string, description: "the parameter's name in the contract's ABI" },
        type: { ...string, description: 'its Solidity type, e.g. uint64' },
        value: {
          description:
            'an address as 0x hex, an integer as a decimal string (viem takes it as a bigint, ethers as is), bytes32[] as an array of 0x 32-byte hex',
          oneOf: [string, { type: 'array', items: hash }],
        },
      }),
    },
    data: {
      ...string,
      pattern: '^0x([0-9a-f]{2})+$',
      description: 'calldata: the selector followed by the ABI-encoded arguments',
    },
  },
  `DividendDistributor.claim as a transaction: send \`data\` to \`to\` (no value). ${CLAIM_SENDER}.`,
);

const merkleProof = object(
  {
    fund: { ...string, description: 'fund slug' },
    vault: { ...address, description: 'the `fund` argument of claim' },
    epoch: { ...integer, minimum: 0 },
    account: address,
    amount: { ...decimal, description: 'dividend in the base asset' },
    amountRaw: {
      type: 'string',
      pattern: '^\\d+$',
      description: 'dividend in base units: the `amount` argument of claim',
    },
    merkleRoot: hash,
    leaf: { ...hash, description: 'keccak256(bytes.concat(keccak256(abi.encode(account, amountRaw))))' },
    proof: { type: 'array', items: hash, description: 'sibling hashes from leaf to root' },
    claimed: {
      ...nullable(boolean),
      description:
        'DividendDistributor.isClaimed read on-chain when the answer is built (the service rebuilds its cached answer once a newer block is indexed; a downstream HTTP cache may keep it up to max-age, 300 s); null without a chain RPC',
    },
    distributor: { ...nullable(address), description: 'DividendDistributor address' },
    claim: {
      description: `the DividendDistributor.claim transaction paying this dividend, ready to send as \`to\` and \`data\`; null when distributor is null`,
      oneOf: [claimCall, { type: 'null' }],
    },
  },
  `A proof verified against the on-chain root, and the claim call it makes (${CLAIM_SIGNATURE} on the DividendDistributor). ${CLAIM_SENDER}.`,
);

const strategy = object(
  {
    slug: string,
    name: string,
    nameCn: { ...string, description: 'name in Chinese' },
    address: { ...address, description: 'strategy address as used in FundVault allocations' },
    category: string,
    description: string,
    explorer: { ...uri, description: 'block-explorer URL of the address' },
    ratings: object({
      quantitative: object({
        sharpe: { type: 'number', description: 'annualised Sharpe ratio' },
        maxDrawdownBps: bps,
        volatilityBps: bps,
        annualReturnBps: integer,
        score: { type: 'number', minimum: 0, maximum: 100, description: 'higher is better' },
      }),
      qualitative: object({
        grade: { enum: ['A', 'B', 'C', 'D', 'E'], description: 'A is best' },
        risk: { enum: ['low', 'medium', 'high'] },
        liquidity: string,
        summary: string,
      }),
    }),
  },
  'A strategy of the catalogue with quantitative and qualitative ratings.',
);

const protocolEvent = object(
  {
    id: { ...string, pattern: '^0x[0-9a-f]{72}$', description: EVENT_ID_ENCODING },
    contract: {
      ...address,
      description: 'emitting contract, checksummed (EIP-55) as GET /v1/contracts lists it',
    },
    contractName: {
      ...nullable(string),
      description:
        "name of the emitting contract as GET /v1/contracts lists it (for a fund vault the vault's name; a vault missing from that list: its fund slug); null for any other address",
    },
    fund: {
      ...nullable(string),
      description:
        "slug of the fund the event concerns (the emitting vault's, or the fund a NavOracle, DividendDistributor or FundRegistry event names); null for events that concern no fund, or a fund GET /v1/funds does not list",
    },
    eventName: {
      ...string,
      enum: EVENT_NAMES,
      description: 'Solidity event name (the closed list of the eventName parameter of GET /v1/events)',
    },
    blockNumber: { ...integer, minimum: 0 },
    logIndex: { ...integer, minimum: 0 },
    txHash: hash,
    timestamp: { ...dateTime, description: 'block time' },
    args: { type: 'object', description: `decoded arguments, ${EVENT_ARGS_ENCODING}` },
  },
  'An indexed on-chain event.',
);

export const componentSchemas: Record<string, JsonSchema> = {
  Protocol: object({
    name: string,
    slug: string,
    version: { ...string, description: 'API version (1.0.0), the same as api.version of GET /v1/health' },
    chain: object({ id: integer, name: string, explorer: uri, isTestnet: boolean }),
    contractsCount: { ...integer, minimum: 0 },
    funds: {
      type: 'array',
      items: object({
        slug: string,
        name: string,
        status: {
          ...ref('FundStatus'),
          description:
            'as of when the body was built: a downstream HTTP cache may keep this reference-tier body up to 3600 s, so revalidate (If-None-Match, or Cache-Control: no-cache) or read GET /v1/funds (30 s) or the pausedModules of GET /v1/health (15 s) for a current status',
        },
      }),
    },
    policies: {
      type: 'array',
      items: object({ slug: string, name: string, kind: ref('PolicyKind') }),
    },
    deployedAt: date,
    docs: uri,
  }),
  FundStatus: {
    enum: ['open', 'paused', 'closed'],
    description: `open: ${FUND_STATUS_MEANINGS.open}; paused: ${FUND_STATUS_MEANINGS.paused} (GET /v1/health pausedModules names which); closed: ${FUND_STATUS_MEANINGS.closed}.`,
  },
  PolicyKind: { enum: [...POLICY_KINDS] },
  ContractItem: object({
    name: string,
    address,
    chainId: integer,
    role: { ...string, description: 'role description in Chinese' },
    roleEn: { ...string, description: 'role description in English' },
    category: string,
    explorer: { ...uri, description: 'block-explorer URL of the address' },
  }),
  ContractList: list('ContractItem'),
  FixedPlusFloatParams: fixedPlusFloatParams,
  FractionalKellyParams: fractionalKellyParams,
  PolicyItem: object({
    slug: string,
    name: string,
    kind: ref('PolicyKind'),
    address,
    description: string,
    params: {
      description:
        'on-chain parameters read live; their names follow `kind`; null when no chain RPC is configured',
      oneOf: [ref('FixedPlusFloatParams'), ref('FractionalKellyParams'), { type: 'null' }],
    },
  }),
  PolicyList: list('PolicyItem'),
  FundSummary: object({
    slug: { ...string, description: 'fund identifier used in paths' },
    name: string,
    nameCn: { ...string, description: 'name in Chinese' },
    chainId: integer,
    baseAsset: { ...string, description: 'base asset symbol' },
    policy: object({ slug: string, address }),
    status: ref('FundStatus'),
    since: date,
    nav: {
      description: 'latest Published NAV; null before the first publication',
      oneOf: [
        object({
          epoch: integer,
          navPerShare,
          settledAt: { ...nullable(dateTime), description: NAV_SETTLED_AT_MEANING },
          publishedAt: dateTime,
        }),
        { type: 'null' },
      ],
    },
  }),
  FundList: list('FundSummary'),
  FundDetail: object({
    data: object({
      slug: string,
      name: string,
      addresses: object({
        vault: address,
        shareToken: address,
        policy: address,
        multisig: address,
        baseAsset: address,
      }),
      links: object({ website: uri, portal: uri }),
    }),
  }),
  NavRecord: navRecord,
  LatestNav: object({ fund: { ...string, description: 'fund slug' }, nav: ref('NavRecord') }),
  NavHistory: object({
    fund: { ...string, description: 'fund slug' },
    points: { type: 'array', items: ref('NavRecord'), description: 'ascending by epoch' },
  }),
  AllocationRecord: object(
    {
      fund: { ...string, description: 'fund slug' },
      available: { ...boolean, description: 'false when the chain RPC or contract is not configured' },
      totalAssets: { ...nullable(decimal), description: 'read live on-chain; null when unavailable' },
      strategies: {
        type: 'array',
        description: "in the vault's order, retired strategies included; empty when unavailable",
        items: object({
          strategy: { ...address, description: 'strategy address as the chain returns it (checksummed)' },
          strategySlug: {
            ...nullable(string),
            description:
              'slug of the catalogue strategy at this address (GET /v1/strategies/{slug}); null when the catalogue does not list it',
          },
          targetBps: {
            ...bps,
            description: "target weight, bps of the vault's assets; counts only while active",
          },
          capBps: { ...bps, description: 'maximum weight, bps; at least targetBps' },
          active: {
            ...boolean,
            description: 'false once retired: it stays listed, and its target no longer counts',
          },
        }),
      },
    },
    ALLOCATION_RULE,
  ),
  ReserveRecord: object(
    {
      fund: { ...string, description: 'fund slug' },
      available: { ...boolean, description: 'false when the chain RPC or contract is not configured' },
      balance: {
        ...nullable(decimal),
        description: 'live reserve balance (FundVault.reserveBalance()); null when unavailable',
      },
      totalAssets: {
        ...nullable(decimal),
        description:
          'live assets under management (FundVault.totalAssets()), read with balance: the whole percentOfAum and the bounds are of; null when unavailable',
      },
      percentOfAum: {
        type: ['number', 'null'],
        description:
          'balance / totalAssets x 100, a percent (not bps) computed on the exact amounts and rounded half up to 2 decimals; may exceed 100; null when unavailable, or when totalAssets is 0',
      },
      targetMinBps: {
        ...nullable(bps),
        description: "policy's reserve floor, bps of totalAssets; null when unavailable",
      },
      targetMaxBps: {
        ...nullable(bps),
        description: "policy's reserve cap, bps of totalAssets; null when unavailable",
      },
    },
    RESERVE_OVER_ASSETS,
  ),
  HealthRecord: object({
    status: {
      enum: ['ok', 'degraded'],
      description: `degraded: indexing errors, the indexer more than HEALTH_MAX_LAG_BLOCKS (default ${DEFAULT_HEALTH_MAX_LAG_BLOCKS}) blocks behind the chain head (or ahead of the head the chain RPC reports), the indexer saying it is unhealthy or failed (indexer.indexingHealth), or live chain reads failing`,
    },
    api: object({ version: string }),
    indexer: object({
      chainId: integer,
      contractsTracked: {
        ...integer,
        minimum: 0,
        description:
          "contracts whose events are indexed: the registry's FundRegistry, NavOracle and DividendDistributor, and every fund vault indexed so far",
      },
      deployment: {
        ...nullable(string),
        description:
          "id of the subgraph deployment serving the data (_meta.deployment); it changes when a new version is deployed under the same name. graph-node's ids are IPFS hashes (Qm…, as in the example); the embedded indexer's (devnet mode) are an L and 45 hex digits, a hash of its build and network addresses, so they change with every build of the subgraph",
      },
      maxIndexedBlock: { ...integer, minimum: 0, description: 'latest block the indexed data reflects' },
      lastUpdatedAt: { ...nullable(dateTime), description: 'time of the last indexed block' },
      hasIndexingErrors: {
        ...boolean,
        description: 'the subgraph reports indexing errors; its data is still served and status is degraded',
      },
      chainHeadBlock: {
        ...nullable(integer),
        minimum: 0,
        description: 'latest block of the chain, read live; null without a chain RPC or when it fails',
      },
      lagBlocks: {
        ...nullable(integer),
        description:
          'chainHeadBlock - maxIndexedBlock; negative when the index is ahead of the head the chain RPC reports (the RPC lags the indexer, or the indexed tip left the chain in a reorg); null when chainHeadBlock is. status is degraded when it is further from 0 than HEALTH_MAX_LAG_BLOCKS',
      },
      indexingHealth: {
        type: ['string', 'null'],
        enum: ['healthy', 'unhealthy', 'failed', null],
        description:
          "the indexer's own verdict from its status API (graph-node's indexingStatuses): healthy; unhealthy (indexing goes on past handler errors); failed (indexing has halted: fatalError says why). Only this shows a halted indexer on a chain without new blocks. null when the service has no status API (SUBGRAPH_STATUS_URL), or it does not answer or does not know the deployment",
      },
      fatalError: {
        description: 'why indexing halted, when indexingHealth is failed; null otherwise',
        oneOf: [
          object({
            message: {
              ...string,
              description:
                "the indexer's message; URLs in it are cut to scheme://host[:port], and it to 1,000 characters",
            },
            blockNumber: {
              ...nullable(integer),
              minimum: 0,
              description:
                'the block whose handlers failed; null when no one block did (an RPC outage, a full disk)',
            },
            deterministic: {
              ...boolean,
              description:
                'true: the block fails on every retry, indexing stays halted until a new subgraph version; false: the indexer retries by itself',
            },
          }),
          { type: 'null' },
        ],
      },
    }),
    nav: {
      description: "the latest publication of the registry's funds; null before any",
      oneOf: [object({ latestEpoch: integer, publishedAt: dateTime }), { type: 'null' }],
    },
    pausedModules: {
      type: 'array',
      items: { ...string, pattern: '^[a-z0-9-]+:(subscriptions|redemptions|claims)$' },
      description:
        '"<fund slug>:<module>", read live from each vault (the indexed state without a chain RPC or when live reads fail); empty when none',
    },
    now: {
      ...dateTime,
      description:
        'server time when this record was built: a cached record is up to 15 s old, its Age header says how long; judge staleness by blocks (indexer.lagBlocks)',
    },
  }),
  DividendRound: dividendRound,
  DividendRoundPage: object({
    fund: { ...string, description: 'fund slug' },
    items: { type: 'array', items: ref('DividendRound'), description: 'newest epoch first' },
    count: { ...integer, minimum: 0, description: 'items on this page' },
    nextCursor: {
      ...nullable(string),
      description: 'pass as `cursor` for the next page; null on the last page',
    },
  }),
  DividendRoundDetail: object({ data: ref('DividendRound') }),
  MerkleProof: merkleProof,
  MerkleProofDetail: object({ data: ref('MerkleProof') }),
  Strategy: strategy,
  StrategyList: list('Strategy'),
  StrategyDetail: object({ data: ref('Strategy') }),
  ProtocolEvent: protocolEvent,
  EventPage: object({
    items: { type: 'array', items: ref('ProtocolEvent'), description: 'newest first by (block, log index)' },
    count: { ...integer, minimum: 0, description: 'items on this page' },
    nextCursor: {
      ...nullable(string),
      description: 'pass as `cursor` for older events; null on the last page',
    },
  }),
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem details',
    required: ['type', 'title', 'status'],
    additionalProperties: true,
    properties: {
      type: { ...uri, description: '{problem_base}/<kind>; the URL serves a page explaining the kind' },
      title: string,
      status: { ...integer, minimum: 400, maximum: 599 },
      detail: { ...string, description: 'what went wrong and what to change' },
      instance: { ...string, description: 'the request path' },
      parameter: { ...string, description: 'for invalid-parameter: the parameter at fault' },
    },
  },
};
