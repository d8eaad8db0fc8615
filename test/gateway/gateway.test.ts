// The gateway against the real indexed devnet: every type resolves with the values the
// scenario wrote (its ledger is the oracle), proofs verify with OpenZeppelin's verifier,
// a distribution whose root differs from the chain is refused, armor limits hold, unknown
// slugs give NOT_FOUND, and the fund list costs one subgraph request.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { getIntrospectionQuery } from 'graphql';
import { decodeFunctionData, getAddress, parseUnits, toFunctionSelector, type Hex } from 'viem';
import { beforeAll, describe, expect, it } from 'vitest';
import { abiOf } from '../../devnet/deploy.ts';
import { kellyParams, threePoolParams } from '../../devnet/protocol-config.ts';
import type { Gateway } from '../../gateway/server.ts';
import { authenticatingProxy } from '../reliability/servers/authenticating-proxy.ts';
import {
  graphql,
  indexedStack,
  testGateway,
  type GraphQLResponse,
  type IndexedStack,
} from '../harness/stack.ts';

let stack: IndexedStack;
let gateway: Gateway;

beforeAll(async () => {
  stack = await indexedStack();
  gateway = testGateway(stack);
});

const ledger = () => stack.devnet.ledger;
const fundOf = (slug: string) => {
  const fund = ledger().funds.find((f) => f.slug === slug);
  if (!fund) throw new Error(`ledger has no fund ${slug}`);
  return fund;
};
const units = (decimal: string) => parseUnits(decimal, 6).toString();
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

describe('registry-backed types', () => {
  it('resolves protocol, contracts and strategies exactly as the registry lists them', async () => {
    const { data } = await graphql(
      gateway,
      `
        {
          protocol {
            name
            version
            chain {
              id
            }
            contractsCount
          }
          contracts {
            name
            address
            roleEn
            explorer
          }
          strategies {
            slug
            address
            ratings {
              quantitative {
                score
              }
              qualitative {
                grade
              }
            }
          }
        }
      `,
    );
    const registry = stack.registry;
    expect(data?.protocol).toEqual({
      name: registry.protocol.name,
      version: '1.0.0',
      chain: { id: 31337 },
      contractsCount: registry.contracts.length,
    });
    expect(data?.contracts.map((c: { address: string }) => c.address)).toEqual(
      registry.contracts.map((c) => c.address),
    );
    expect(data?.contracts[0].explorer).toBe(
      `${registry.chain.explorer.replace(/\/$/, '')}/address/${registry.contracts[0]?.address}`,
    );
    expect(data?.strategies).toEqual(
      registry.strategies.map((s) => ({
        slug: s.slug,
        address: s.address,
        ratings: {
          quantitative: { score: s.ratings.quantitative.score },
          qualitative: { grade: s.ratings.qualitative.grade },
        },
      })),
    );
  });

  it('reads each policy kind with its own parameter names from the chain', async () => {
    const { data } = await graphql(
      gateway,
      `
        {
          policies {
            kind
            params {
              __typename
              ... on FixedPlusFloatParams {
                annualBaseBps
                profitToHolderBps
                profitToReserveBps
                profitToNavBps
                reserveTargetMaxBps
                reserveTargetMinBps
              }
              ... on FractionalKellyParams {
                kellyFractionBps
                expectedEdgeBps
                varianceBps
                maxExposureBps
                reserveTargetMinBps
                reserveTargetMaxBps
              }
            }
          }
        }
      `,
    );
    const byKind = Object.fromEntries(
      data?.policies.map((p: { kind: string; params: object }) => [p.kind, p.params]),
    );
    expect(byKind['fixed-plus-float']).toEqual({ __typename: 'FixedPlusFloatParams', ...threePoolParams });
    expect(byKind['fractional-kelly']).toEqual({ __typename: 'FractionalKellyParams', ...kellyParams });
  });
});

describe('indexed types', () => {
  it('derives each fund status from the scenario (closed, paused, open)', async () => {
    const { data } = await graphql(gateway, '{ funds { slug status } }');
    for (const fund of data?.funds ?? []) {
      const expected = fundOf(fund.slug);
      const paused = Object.values(expected.pausedModules).some(Boolean);
      expect(fund.status, fund.slug).toBe(
        expected.status === 'closed' ? 'closed' : paused ? 'paused' : 'open',
      );
    }
    expect(new Set(data?.funds.map((f: { status: string }) => f.status))).toEqual(
      new Set(['open', 'paused', 'closed']),
    );
  });

  it("gives each fund's latest Published NAV with exact amounts", async () => {
    const { data } = await graphql(
      gateway,
      '{ funds { slug latestNav { epoch navPerShare totalAssets totalSupply publishedAt status onchainTxHash } } }',
    );
    for (const fund of data?.funds ?? []) {
      const published = ledger()
        .navRecords.filter((r) => r.fund === fund.slug && r.status === 'Published')
        .sort((a, b) => b.epoch - a.epoch)[0];
      if (!published) throw new Error(`scenario published no NAV for ${fund.slug}`);
      const nav = fund.latestNav;
      expect(nav.epoch).toBe(published.epoch);
      expect(nav.navPerShare).toMatch(/^\d+\.\d{6}$/);
      expect(units(nav.navPerShare)).toBe(published.navPerShare);
      expect(units(nav.totalAssets)).toBe(published.totalAssets);
      expect(units(nav.totalSupply)).toBe(published.totalSupply);
      expect(nav.publishedAt).toBe(iso(published.publishedAt as number));
      expect(nav.status).toBe('Published');
      expect(nav.onchainTxHash).toBe(published.publishTxHash);
    }
  });

  it('returns the last 90 epochs of every status by default, ascending', async () => {
    const slug = ledger().funds[0]?.slug as string;
    const { data } = await graphql(
      gateway,
      `{ fund(slug: "${slug}") { navHistory { epoch status navPerShare } } }`,
    );
    const expected = ledger()
      .navRecords.filter((r) => r.fund === slug)
      .sort((a, b) => a.epoch - b.epoch)
      .slice(-90);
    expect(data?.fund.navHistory).toEqual(
      expected.map((r) => ({
        epoch: r.epoch,
        status: r.status,
        navPerShare: data?.fund.navHistory.find((p: { epoch: number }) => p.epoch === r.epoch)?.navPerShare,
      })),
    );
    expect(data?.fund.navHistory.map((p: { navPerShare: string }) => units(p.navPerShare))).toEqual(
      expected.map((r) => r.navPerShare),
    );
  });

  it('bounds NAV history by from, to and limit', async () => {
    const slug = ledger().funds[1]?.slug as string;
    const { data } = await graphql(
      gateway,
      `{ fund(slug: "${slug}") { a: navHistory(from: 5, to: 20, limit: 4) { epoch } b: navHistory(to: 20, limit: 3) { epoch } } }`,
    );
    const epochs = ledger()
      .navRecords.filter((r) => r.fund === slug && r.epoch >= 5 && r.epoch <= 20)
      .map((r) => r.epoch)
      .sort((a, b) => a - b);
    expect(data?.fund.a.map((p: { epoch: number }) => p.epoch)).toEqual(epochs.slice(0, 4));
    expect(data?.fund.b.map((p: { epoch: number }) => p.epoch)).toEqual(epochs.slice(-3));
  });

  it('rejects NAV history bounds outside the SPEC with BAD_INPUT naming the argument', async () => {
    const slug = ledger().funds[0]?.slug as string;
    for (const [args, argument] of [
      ['limit: 0', 'limit'],
      ['limit: 501', 'limit'],
      ['from: -1', 'from'],
      ['from: 9, to: 3', 'to'],
    ]) {
      const { errors } = await graphql(
        gateway,
        `{ fund(slug: "${slug}") { navHistory(${args}) { epoch } } }`,
      );
      expect(errors?.[0]?.extensions, args).toMatchObject({ code: 'BAD_INPUT', argument });
    }
  });

  it('answers the sibling fields of a fund field whose own arguments fail, nulling that field alone', async () => {
    const round = ledger().rounds[0];
    if (!round) throw new Error('scenario posted no round');
    const { data, errors } = await graphql(
      gateway,
      `{ fund(slug: "${round.fund}") { name a: navHistory(to: 10, limit: 3) { epoch } c: navHistory(from: 5, to: 3) { epoch }
        dividends(limit: 0) { nextCursor } missing: dividend(epoch: 3) { epoch }
        round: dividend(epoch: ${round.epoch}) { epoch proof(address: "0x${'12'.repeat(20)}") { proof } } } }`,
    );
    const lastThreeTo10 = ledger()
      .navRecords.filter((r) => r.fund === round.fund && r.epoch <= 10)
      .map((r) => ({ epoch: r.epoch }))
      .sort((x, y) => x.epoch - y.epoch)
      .slice(-3);
    expect(data?.fund).toEqual({
      name: stack.registry.funds.find((f) => f.slug === round.fund)?.name,
      a: lastThreeTo10,
      c: null,
      dividends: null,
      missing: null,
      round: { epoch: round.epoch, proof: null },
    });
    // resolvers settle in any order: compare the errors by path
    expect(errors?.map((e) => [e.path?.join('.'), e.extensions?.code]).sort()).toEqual([
      ['fund.c', 'BAD_INPUT'],
      ['fund.dividends', 'BAD_INPUT'],
      ['fund.missing', 'NOT_FOUND'],
      ['fund.round.proof', 'NOT_FOUND'],
    ]);
  });

  it('answers the sibling root fields of events whose own arguments fail', async () => {
    const { data, errors } = await graphql(gateway, '{ protocol { name } events(limit: 0) { nextCursor } }');
    expect(data).toEqual({ protocol: { name: stack.registry.protocol.name }, events: null });
    expect(errors?.[0]?.extensions).toMatchObject({ code: 'BAD_INPUT', argument: 'limit' });
  });

  it('pages dividend rounds newest first to the end without gaps or repeats', async () => {
    const slug = ledger().rounds[0]?.fund as string;
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const page: GraphQLResponse = await graphql(
        gateway,
        'query($slug: String!, $cursor: String) { fund(slug: $slug) { dividends(limit: 2, cursor: $cursor) { items { epoch } nextCursor } } }',
        { slug, cursor },
      );
      seen.push(...(page.data?.fund.dividends.items ?? []).map((r: { epoch: number }) => r.epoch));
      cursor = page.data?.fund.dividends.nextCursor;
    } while (cursor);
    const expected = ledger()
      .rounds.filter((r) => r.fund === slug)
      .map((r) => r.epoch)
      .sort((a, b) => b - a);
    expect(seen).toEqual(expected);
  });

  it('resolves a dividend round with its root, total, leaf count and claims', async () => {
    const round = ledger().rounds[0];
    if (!round) throw new Error('scenario posted no round');
    const { data } = await graphql(
      gateway,
      `{ fund(slug: "${round.fund}") { dividend(epoch: ${round.epoch}) { merkleRoot total leafCount uri claimedCount postedBlock postedTxHash } } }`,
    );
    const claims = ledger().claims.filter((c) => c.fund === round.fund && c.epoch === round.epoch);
    expect(data?.fund.dividend).toEqual({
      merkleRoot: round.merkleRoot,
      total: data?.fund.dividend.total,
      leafCount: round.leafCount,
      uri: round.uri,
      claimedCount: claims.length,
      postedBlock: round.blockNumber,
      postedTxHash: round.txHash,
    });
    expect(units(data?.fund.dividend.total)).toBe(round.total);
  });

  it('counts indexed events per contract and name exactly as the scenario emitted them', async () => {
    const oracle = stack.devnet.deployment.contracts.navOracle.toLowerCase();
    const checksummedOracle = getAddress(oracle);
    const expected = ledger().eventCountsByAddress[oracle]?.NavPublished ?? 0;
    let count = 0;
    let cursor: string | null = null;
    do {
      const page: GraphQLResponse = await graphql(
        gateway,
        'query($c: String, $cursor: String) { events(contract: $c, eventName: "NavPublished", limit: 100, cursor: $cursor) { items { eventName contract } nextCursor } }',
        { c: oracle, cursor },
      );
      for (const e of page.data?.events.items ?? [])
        expect(e).toEqual({ eventName: 'NavPublished', contract: checksummedOracle });
      count += page.data?.events.items.length ?? 0;
      cursor = page.data?.events.nextCursor;
    } while (cursor);
    expect(expected).toBeGreaterThan(0);
    expect(count).toBe(expected);
  });

  it.each(['navpublished', 'nav_published', 'nav-published'])(
    'refuses the event name %s with BAD_INPUT naming the one meant, as /v1/events does',
    async (written) => {
      const { errors } = await graphql(gateway, `{ events(eventName: "${written}") { nextCursor } }`);
      expect(errors?.[0]?.extensions).toMatchObject({ code: 'BAD_INPUT', argument: 'eventName' });
      expect(errors?.[0]?.message).toMatch(
        new RegExp(
          `; got '${written}'\\. Did you mean 'NavPublished'\\? Names are case-sensitive and written as listed\\.$`,
        ),
      );
    },
  );

  it('refuses an event name the stream does not carry with BAD_INPUT listing those it does', async () => {
    const { errors } = await graphql(gateway, '{ events(eventName: "Transfer") { nextCursor } }');
    expect(errors?.[0]?.extensions).toMatchObject({ code: 'BAD_INPUT', argument: 'eventName' });
    expect(errors?.[0]?.message).toContain(
      'eventName must be one of these event names, exactly as written (case-sensitive): FundRegistered,',
    );
    expect(errors?.[0]?.message).not.toContain('Did you mean');
  });

  it('decodes event arguments and names the emitting contract', async () => {
    const { data } = await graphql(
      gateway,
      '{ events(eventName: "NavPublished", limit: 1) { items { contractName txHash blockNumber timestamp args } } }',
    );
    const event = data?.events.items[0];
    const fund = stack.devnet.deployment.funds.find((f) => f.vault === event.args.fund);
    expect(fund).toBeDefined();
    const record = ledger().navRecords.find(
      (r) => r.fund === fund?.slug && r.epoch === Number(event.args.epoch),
    );
    expect(event.contractName).toBe('NAV Oracle');
    expect(event.txHash).toBe(record?.publishTxHash);
    expect(event.args.navPerShare).toBe(record?.navPerShare);
    expect(event.timestamp).toBe(iso(record?.publishedAt as number));
  });

  it('reports health from _meta, live paused modules and the latest publication', async () => {
    const { data } = await graphql(
      gateway,
      '{ health { status api { version } indexer { chainId maxIndexedBlock hasIndexingErrors } nav { latestEpoch } pausedModules } }',
    );
    const paused = ledger().funds.flatMap((f) =>
      Object.entries(f.pausedModules)
        .filter(([, on]) => on)
        .map(([m]) => `${f.slug}:${m}`),
    );
    const latest = Math.max(
      ...ledger()
        .navRecords.filter((r) => r.status === 'Published')
        .map((r) => r.epoch),
    );
    expect(data?.health).toMatchObject({
      status: 'ok',
      api: { version: '1.0.0' },
      indexer: { chainId: 31337, hasIndexingErrors: false },
      nav: { latestEpoch: latest },
    });
    expect(data?.health.indexer.maxIndexedBlock).toBeGreaterThanOrEqual(ledger().endBlock);
    expect(data?.health.pausedModules.sort()).toEqual(paused.sort());
  });
});

describe('live chain types', () => {
  it("reads each fund's strategy allocations as the scenario left them", async () => {
    const { data } = await graphql(
      gateway,
      '{ funds { slug allocations { available strategies { strategy targetBps capBps active } } } }',
    );
    const slugs = await graphql(gateway, '{ funds { slug allocations { strategies { strategySlug } } } }');
    for (const fund of slugs.data?.funds ?? []) {
      expect(fund.allocations.strategies.map((s: { strategySlug: string }) => s.strategySlug)).toEqual(
        fundOf(fund.slug).strategies.map((s) => s.strategySlug),
      );
    }
    for (const fund of data?.funds ?? []) {
      expect(fund.allocations.available).toBe(true);
      expect(fund.allocations.strategies).toEqual(
        fundOf(fund.slug).strategies.map(({ strategy, targetBps, capBps, active }) => ({
          strategy,
          targetBps,
          capBps,
          active,
        })),
      );
    }
  });

  it("reads the reserve against the policy's bounds", async () => {
    const { data } = await graphql(
      gateway,
      '{ funds { slug policy { kind } reserve { available balance totalAssets percentOfAum targetMinBps targetMaxBps } } }',
    );
    for (const fund of data?.funds ?? []) {
      const params = fund.policy.kind === 'fixed-plus-float' ? threePoolParams : kellyParams;
      expect(fund.reserve).toMatchObject({
        available: true,
        targetMinBps: params.reserveTargetMinBps,
        targetMaxBps: params.reserveTargetMaxBps,
      });
      expect(fund.reserve.balance).toMatch(/^\d+\.\d{6}$/);
      // nothing moves the vault's assets after the scenario's last settlement
      const last = ledger()
        .settlements.filter((x) => x.fund === fund.slug)
        .sort((a, b) => b.epoch - a.epoch)[0];
      expect(units(fund.reserve.balance)).toBe(last?.reserveBalance);
      expect(units(fund.reserve.totalAssets)).toBe(last?.totalAssets);
      // percent of the total assets it gives, rounded half up to 2 decimals on integers
      const balance = parseUnits(fund.reserve.balance, 6);
      const total = parseUnits(fund.reserve.totalAssets, 6);
      expect(fund.reserve.percentOfAum).toBe(
        total === 0n ? null : Number((balance * 10_000n + total / 2n) / total) / 100,
      );
    }
  });

  it('answers available: false when no chain RPC is configured', async () => {
    const offline = testGateway(stack, { chain: undefined });
    const { data } = await graphql(
      offline,
      '{ funds { allocations { available totalAssets strategies { strategy } } reserve { available balance totalAssets } } policies { params { __typename } } }',
    );
    for (const fund of data?.funds ?? []) {
      expect(fund.allocations).toEqual({ available: false, totalAssets: null, strategies: [] });
      expect(fund.reserve).toEqual({ available: false, balance: null, totalAssets: null });
    }
    expect(data?.policies.every((p: { params: unknown }) => p.params === null)).toBe(true);
  });
});

describe('dividend proofs', () => {
  it('returns a proof that OpenZeppelin verifies against the on-chain root', async () => {
    const round = ledger().rounds[0];
    if (!round) throw new Error('scenario posted no round');
    const dump = JSON.parse(readFileSync(join(stack.devnet.dataDir, round.uri), 'utf8'));
    const [account, amount] = dump.values[dump.values.length - 1].value as [string, string];
    const { data } = await graphql(
      gateway,
      `{ fund(slug: "${round.fund}") { dividend(epoch: ${round.epoch}) { proof(address: "${account.toLowerCase()}") { account amountRaw merkleRoot proof } } } }`,
    );
    const proof = data?.fund.dividend.proof;
    expect(proof).toMatchObject({ account, amountRaw: amount, merkleRoot: round.merkleRoot });
    expect(
      StandardMerkleTree.verify(round.merkleRoot, ['address', 'uint256'], [account, amount], proof.proof),
    ).toBe(true);
  });

  it("gives the claim call that the compiled DividendDistributor's ABI decodes to the proof's own values", async () => {
    const round = ledger().rounds[0];
    if (!round) throw new Error('scenario posted no round');
    const dump = JSON.parse(readFileSync(join(stack.devnet.dataDir, round.uri), 'utf8'));
    const [account] = dump.values[0].value as [string, string];
    const { data } = await graphql(
      gateway,
      `{ fund(slug: "${round.fund}") { dividend(epoch: ${round.epoch}) { proof(address: "${account}") {
        vault epoch account amountRaw proof distributor claim { to signature selector args { name type value } data } } } } }`,
    );
    const served = data?.fund.dividend.proof;
    const { claim, ...proof } = served;
    const abi = abiOf('DividendDistributor');
    const decoded = decodeFunctionData({ abi, data: claim.data as Hex });
    expect(decoded).toEqual({
      functionName: 'claim',
      args: [proof.vault, BigInt(proof.epoch), proof.account, BigInt(proof.amountRaw), proof.proof],
    });
    expect(claim).toEqual({
      to: proof.distributor,
      signature: 'claim(address,uint64,address,uint256,bytes32[])',
      selector: toFunctionSelector('function claim(address,uint64,address,uint256,bytes32[])'),
      args: [
        { name: 'fund', type: 'address', value: proof.vault },
        { name: 'epoch', type: 'uint64', value: String(proof.epoch) },
        { name: 'account', type: 'address', value: proof.account },
        { name: 'amount', type: 'uint256', value: proof.amountRaw },
        { name: 'proof', type: 'bytes32[]', value: proof.proof },
      ],
      data: claim.data,
    });
    expect(claim.data.startsWith(claim.selector)).toBe(true);
  });

  const firstRound = () => {
    const round = ledger().rounds[0];
    if (!round) throw new Error('scenario posted no round');
    return round;
  };
  const proofErrors = async (address: string) => {
    const { fund, epoch } = firstRound();
    const query = `{ fund(slug: "${fund}") { dividend(epoch: ${epoch}) { proof(address: "${address}") { proof } } } }`;
    return (await graphql(gateway, query)).errors?.map(({ message, extensions }) => ({
      message,
      extensions,
    }));
  };

  it('gives NOT_FOUND for an address without a leaf in the round, saying how to find its rounds', async () => {
    const { fund, epoch } = firstRound();
    const address = `0x${'12'.repeat(20)}`;
    expect(await proofErrors(address)).toEqual([
      {
        message: `Address ${address} is not a recipient of dividend round ${epoch} of fund ${fund}: the round's distribution has no leaf for it. Check the address, or list the fund's rounds with GET /v1/funds/${fund}/dividends or the GraphQL query { fund(slug: "${fund}") { dividends { items { epoch } nextCursor } } } and ask for another epoch.`,
        extensions: { code: 'NOT_FOUND' },
      },
    ]);
  });

  it('gives BAD_INPUT naming the address argument for a malformed address', async () => {
    expect(await proofErrors('0x1234')).toEqual([
      {
        message: 'address must be a 0x-prefixed 20-byte hex address (40 hex digits).',
        extensions: { code: 'BAD_INPUT', argument: 'address' },
      },
    ]);
  });

  it('refuses a distribution whose root differs from the on-chain root', async () => {
    const [first, second] = ledger().rounds;
    if (!first || !second) throw new Error('scenario posted fewer than two rounds');
    const base = mkdtempSync(join(tmpdir(), 'h4-dist-'));
    try {
      cpSync(join(stack.devnet.dataDir, 'distributions'), join(base, 'distributions'), { recursive: true });
      // a valid tree, but another round's: its root is not the one posted for this round
      writeFileSync(join(base, first.uri), readFileSync(join(stack.devnet.dataDir, second.uri)));
      const tampered = testGateway(stack, { distributions: { base, timeoutMs: 5_000, cacheSize: 4 } });
      const account = JSON.parse(readFileSync(join(base, first.uri), 'utf8')).values[0].value[0] as string;
      const { data, errors } = await graphql(
        tampered,
        `{ fund(slug: "${first.fund}") { dividend(epoch: ${first.epoch}) { proof(address: "${account}") { proof } } } }`,
      );
      expect(data?.fund?.dividend?.proof ?? null).toBeNull();
      expect(errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      // both roots, the chain's and the file's, so the operator sees which file is wrong
      expect(errors?.[0]?.message).toContain(first.merkleRoot.toLowerCase());
      expect(errors?.[0]?.message).toContain(second.merkleRoot.toLowerCase());
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('errors and limits', () => {
  it('gives NOT_FOUND for unknown fund, strategy and policy slugs, naming where each is listed on both surfaces', async () => {
    for (const [query, message] of [
      [
        '{ fund(slug: "nope") { slug } }',
        'No fund has slug "nope". List fund slugs with GET /v1/funds or the GraphQL query { funds { slug } }.',
      ],
      [
        '{ strategy(slug: "nope") { slug } }',
        'No strategy has slug "nope". List strategy slugs with GET /v1/strategies or the GraphQL query { strategies { slug } }.',
      ],
      [
        '{ policy(slug: "nope") { slug } }',
        'No policy has slug "nope". List policy slugs with GET /v1/policies or the GraphQL query { policies { slug } }.',
      ],
    ] as const) {
      const { errors } = await graphql(gateway, query);
      expect(errors?.[0]?.extensions?.code, query).toBe('NOT_FOUND');
      expect(errors?.[0]?.message, query).toBe(message);
    }
  });

  it('names the registered slug a slug in another case or with other separators means, as /v1 does', async () => {
    const { errors } = await graphql(gateway, '{ fund(slug: "Harbor_Stable_Yield") { slug } }');
    expect(errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(errors?.[0]?.message).toBe(
      'No fund has slug "Harbor_Stable_Yield": fund slugs are lowercase letters, digits and single hyphens. Did you mean "harbor-stable-yield"? List fund slugs with GET /v1/funds or the GraphQL query { funds { slug } }.',
    );
  });

  it('says how to list the rounds of a fund when a round or a leaf is missing, as /v1 does', async () => {
    const round = ledger().rounds[0];
    if (!round) throw new Error('scenario posted no round');
    const outsider = `0x${'12'.repeat(20)}`;
    const { errors } = await graphql(
      gateway,
      `{ fund(slug: "${round.fund}") { missing: dividend(epoch: 3) { epoch }
        round: dividend(epoch: ${round.epoch}) { proof(address: "${outsider}") { proof } } } }`,
    );
    const listing = `GET /v1/funds/${round.fund}/dividends or the GraphQL query { fund(slug: "${round.fund}") { dividends { items { epoch } nextCursor } } }`;
    const byPath = Object.fromEntries((errors ?? []).map((e) => [e.path?.join('.'), e.message]));
    expect(byPath).toEqual({
      'fund.missing': `Fund ${round.fund} has no dividend round for epoch 3; list the epochs of its rounds with ${listing}.`,
      'fund.round.proof': `Address ${outsider} is not a recipient of dividend round ${round.epoch} of fund ${round.fund}: the round's distribution has no leaf for it. Check the address, or list the fund's rounds with ${listing} and ask for another epoch.`,
    });
  });

  it('hides the upstream message when the subgraph is unreachable', async () => {
    const down = testGateway(stack, {
      subgraph: { url: 'http://127.0.0.1:9/subgraphs/name/x', timeoutMs: 2_000, maxBatch: 10 },
    });
    const { errors } = await graphql(down, '{ funds { status } }');
    expect(errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(errors?.[0]?.message).toBe('The subgraph is unavailable; retry later.');
  });

  it('admits the standard introspection query, counted against the limits', async () => {
    const { data, errors } = await graphql(gateway, getIntrospectionQuery());
    expect(errors).toBeUndefined();
    expect(data?.__schema.queryType.name).toBe('Query');
  });

  it('rejects an introspection query deeper than the depth limit', async () => {
    const chain = 'ofType { '.repeat(19) + 'name' + ' }'.repeat(19);
    const { errors } = await graphql(gateway, `{ __schema { types { fields { type { ${chain} } } } } }`);
    expect(errors?.[0]?.message).toMatch(/depth limit/i);
    expect(errors?.[0]?.extensions?.code).toBe('BAD_INPUT');
  });

  it('rejects a query over the cost limit', async () => {
    const doubled = getIntrospectionQuery().replace(
      '__schema {',
      'again: __schema { types { ...FullType } } __schema {',
    );
    const { errors } = await graphql(gateway, doubled);
    expect(errors?.[0]?.message).toMatch(/cost limit/i);
  });

  it('rejects a query with too many aliases', async () => {
    const aliases = Array.from({ length: 16 }, (_, i) => `a${i}: protocol { name }`).join(' ');
    const { errors } = await graphql(gateway, `{ ${aliases} }`);
    expect(errors?.[0]?.message).toMatch(/aliases limit/i);
  });
});

describe('subgraph transport', () => {
  /** A loopback proxy to the indexer that fails the first `failures` requests with `status`. */
  async function flakyProxy(failures: number, status: number, rewrite: (body: string) => string = (b) => b) {
    let seen = 0;
    const server = createServer(async (req, res) => {
      seen += 1;
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      if (seen <= failures) {
        res.writeHead(status, { 'content-type': 'text/plain' }).end('upstream hiccup');
        return;
      }
      const upstream = await fetch(stack.subgraphUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(chunks),
      });
      res
        .writeHead(upstream.status, { 'content-type': 'application/json' })
        .end(rewrite(await upstream.text()));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/subgraphs/name/fund-protocol`,
      requests: () => seen,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it('retries once after a transient failure and answers', async () => {
    const proxy = await flakyProxy(1, 502);
    try {
      const retried = testGateway(stack, { subgraph: { url: proxy.url, timeoutMs: 10_000, maxBatch: 1000 } });
      const { data, errors } = await graphql(retried, '{ funds { status } }');
      expect(errors).toBeUndefined();
      expect(data?.funds).toHaveLength(stack.registry.funds.length);
      expect(proxy.requests()).toBe(2);
    } finally {
      await proxy.close();
    }
  });

  it('refuses amounts that are not integers as UPSTREAM_UNAVAILABLE, not an internal error', async () => {
    const proxy = await flakyProxy(0, 200, (body) =>
      body.replace(/"navPerShare":"\d+"/g, '"navPerShare":"1e6"'),
    );
    try {
      const corrupt = testGateway(stack, { subgraph: { url: proxy.url, timeoutMs: 10_000, maxBatch: 1000 } });
      const { errors } = await graphql(corrupt, '{ funds { latestNav { navPerShare } } }');
      expect(errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(errors?.[0]?.message).not.toMatch(/BigInt|1e6/);
    } finally {
      await proxy.close();
    }
  });

  it('gives up after the one retry when the failure persists', async () => {
    const proxy = await flakyProxy(5, 503);
    try {
      const failing = testGateway(stack, { subgraph: { url: proxy.url, timeoutMs: 10_000, maxBatch: 1000 } });
      const { errors } = await graphql(failing, '{ funds { status } }');
      expect(errors?.[0]?.extensions?.code).toBe('UPSTREAM_UNAVAILABLE');
      expect(proxy.requests()).toBe(2);
    } finally {
      await proxy.close();
    }
  });
});

describe('upstream URLs holding credentials', () => {
  it('reads the subgraph and the chain through them, sending the credentials as Basic authorization', async () => {
    const subgraph = await authenticatingProxy(stack.subgraphUrl, '/subgraphs/name/fund-protocol');
    const chain = await authenticatingProxy(stack.devnet.rpcUrl);
    try {
      const gateway = testGateway(stack, {
        subgraph: { url: subgraph.url, timeoutMs: 10_000, maxBatch: 1000 },
        chain: { rpcUrl: chain.url, timeoutMs: 10_000, maxBatch: 200 },
      });
      const { data, errors } = await graphql(
        gateway,
        '{ funds { latestNav { epoch } reserve { available balance } } }',
      );
      expect(errors).toBeUndefined();
      expect(data?.funds.every((f: { reserve: { available: boolean } }) => f.reserve.available)).toBe(true);
      expect(data?.funds.some((f: { latestNav: unknown }) => f.latestNav !== null)).toBe(true);
      expect([subgraph.refused(), chain.refused()]).toEqual([0, 0]);
    } finally {
      subgraph.close();
      chain.close();
    }
  });
});

describe('efficiency', () => {
  it("reads every fund's allocations and reserve in one multicall (and at most the head besides)", async () => {
    const methods: string[] = [];
    const counting: typeof fetch = async (input, init) => {
      const body = JSON.parse(String(init?.body)) as { method: string } | { method: string }[];
      methods.push(...(Array.isArray(body) ? body : [body]).map((call) => call.method));
      return fetch(input, init);
    };
    const counted = testGateway(stack, {
      chain: { rpcUrl: stack.devnet.rpcUrl, timeoutMs: 10_000, maxBatch: 200, fetch: counting },
    });
    const { data } = await graphql(
      counted,
      '{ funds { allocations { available strategies { strategy } } reserve { balance targetMinBps } } }',
    );
    expect(data?.funds.every((f: { allocations: { available: boolean } }) => f.allocations.available)).toBe(
      true,
    );
    // besides, the head the reads are made at, with its hash, which the REST cache keeps with a body
    expect(methods.filter((method) => method !== 'eth_getBlockByNumber')).toEqual(['eth_call']);
    expect(methods.length).toBeLessThanOrEqual(2);
  });

  it('lists every fund with its latest NAV and status in one subgraph request', async () => {
    let requests = 0;
    const counting: typeof fetch = (input, init) => {
      requests += 1;
      return fetch(input, init);
    };
    const counted = testGateway(stack, {
      subgraph: { url: stack.subgraphUrl, timeoutMs: 10_000, maxBatch: 1000, fetch: counting },
    });
    const { data } = await graphql(
      counted,
      '{ funds { slug status latestNav { epoch navPerShare publishedAt } } }',
    );
    expect(data?.funds).toHaveLength(stack.registry.funds.length);
    expect(requests).toBe(1);
  });
});
