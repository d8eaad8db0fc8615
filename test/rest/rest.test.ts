// The REST facade over real HTTP against the indexed devnet: every endpoint's body is checked
// against the scenario's ledger and every response against openapi.json; then each SPEC rule
// (404 body, 400 per malformed parameter, NAV history defaults and bounds, ETag/304, cache
// tiers, 410, 405, CORS, freshness headers, 503) has its own test.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { getAddress, parseUnits } from 'viem';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../../rest/print-openapi.ts';
import { SCHEMA_FILE } from '../../gateway/print-schema.ts';
import { DISCOVERY_DOCUMENTS } from '../../rest/document-table.ts';
import { claimableDividendsQuery } from '../../rest/llms.ts';
import { MAX_URL_LENGTH } from '../../rest/problems.ts';
import { ROUTES } from '../../rest/routes.ts';
import { listenRest, restServiceForSuite, testGateway } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const service = restServiceForSuite();

const ledger = () => service.stack.devnet.ledger;
const get = (path: string, init?: RequestInit) => call(service.base, path, init);
const units = (decimal: string) => parseUnits(decimal, 6).toString();
const firstRound = () => {
  const round = ledger().rounds[0];
  if (!round) throw new Error('scenario posted no round');
  return round;
};
/** the event names the scenario's tracked contracts emitted */
const emittedEventNames = () => {
  const tracked = [
    service.stack.devnet.deployment.contracts.fundRegistry,
    service.stack.devnet.deployment.contracts.navOracle,
    service.stack.devnet.deployment.contracts.dividendDistributor,
    ...service.stack.devnet.deployment.funds.map((f) => f.vault),
  ].map((a) => a.toLowerCase());
  return new Set(tracked.flatMap((address) => Object.keys(ledger().eventCountsByAddress[address] ?? {})));
};
/** a log index as the 4 little-endian bytes ending a ProtocolEvent id */
const logIndexBytes = (logIndex: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(logIndex);
  return bytes.toString('hex');
};
const openapi = JSON.parse(readFileSync(OPENAPI_FILE, 'utf8'));
const eventsExample = () =>
  openapi.paths['/v1/events'].get.responses['200'].content['application/json'].example;

describe('the sixteen endpoints', () => {
  it('GET /v1/protocol lists the registry with each fund status', async () => {
    const { status, body } = await get('/v1/protocol');
    expect(status).toBe(200);
    expect(body.contractsCount).toBe(service.stack.registry.contracts.length);
    expect(body.funds.map((f: { slug: string }) => f.slug)).toEqual(
      service.stack.registry.funds.map((f) => f.slug),
    );
    expect(body.policies).toEqual(
      service.stack.registry.policies.map(({ slug, name, kind }) => ({ slug, name, kind })),
    );
  });

  it('GET /v1/contracts and /v1/policies wrap items with a count', async () => {
    const contracts = await get('/v1/contracts');
    expect(contracts.body.count).toBe(service.stack.registry.contracts.length);
    expect(contracts.body.items[0].chainId).toBe(31337);
    const policies = await get('/v1/policies');
    expect(policies.body.count).toBe(2);
    expect(policies.body.items.map((p: { params: object }) => Object.keys(p.params).length)).toEqual([6, 6]);
  });

  it('GET /v1/health reports indexer progress at or past the scenario', async () => {
    const { body } = await get('/v1/health');
    expect(body.status).toBe('ok');
    expect(body.indexer.maxIndexedBlock).toBeGreaterThanOrEqual(ledger().endBlock);
    expect(body.api.version).toBe('1.0.0');
  });

  it('GET /v1/funds gives each fund with its latest published NAV', async () => {
    const { body } = await get('/v1/funds');
    expect(body.count).toBe(ledger().funds.length);
    for (const fund of body.items) {
      const published = ledger()
        .navRecords.filter((r) => r.fund === fund.slug && r.status === 'Published')
        .sort((a, b) => b.epoch - a.epoch)[0];
      expect(fund.nav.epoch).toBe(published?.epoch);
      expect(units(fund.nav.navPerShare)).toBe(published?.navPerShare);
      expect(fund.baseAsset).toBe('USDC');
    }
  });

  it('GET /v1/funds/{slug} gives addresses and links under data', async () => {
    const fund = service.stack.registry.funds[0];
    const { body } = await get(`/v1/funds/${fund?.slug}`);
    expect(body.data.addresses.vault).toBe(fund?.vault);
    expect(body.data.links).toEqual(fund?.links);
  });

  it('GET /v1/funds/{slug}/nav gives the latest published record', async () => {
    const slug = ledger().funds[0]?.slug as string;
    const { body } = await get(`/v1/funds/${slug}/nav`);
    const published = ledger()
      .navRecords.filter((r) => r.fund === slug && r.status === 'Published')
      .sort((a, b) => b.epoch - a.epoch)[0];
    expect(body.fund).toBe(slug);
    expect(body.nav).toMatchObject({
      epoch: published?.epoch,
      status: 'Published',
      onchainTxHash: published?.publishTxHash,
    });
  });

  it('GET /v1/funds/{slug}/allocations and /reserve read the chain', async () => {
    const fund = ledger().funds[0];
    const allocations = await get(`/v1/funds/${fund?.slug}/allocations`);
    expect(allocations.body.available).toBe(true);
    expect(allocations.body.strategies).toEqual(
      fund?.strategies.map(({ strategy, strategySlug, targetBps, capBps, active }) => ({
        strategy,
        strategySlug,
        targetBps,
        capBps,
        active,
      })),
    );
    const reserve = await get(`/v1/funds/${fund?.slug}/reserve`);
    expect(reserve.body).toMatchObject({
      fund: fund?.slug,
      available: true,
      totalAssets: allocations.body.totalAssets,
    });
  });

  it('GET /v1/funds/{slug}/reserve names the block its live values were read at', async () => {
    const fund = ledger().funds[0]!;
    const head = await fetch(service.stack.devnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] }),
    }).then(async (r) => Number(((await r.json()) as { result: string }).result));
    const reserve = await get(`/v1/funds/${fund.slug}/reserve`);
    expect(reserve.headers.get('x-chain-block')).toBe(String(head));
    // a registry-only answer reads nothing live
    expect((await get('/v1/contracts')).headers.get('x-chain-block')).toBeNull();
  });

  it('GET /v1/funds/{slug}/reserve gives the total assets its percent is of, to recompute it exactly', async () => {
    for (const fund of ledger().funds) {
      const { body } = await get(`/v1/funds/${fund.slug}/reserve`);
      const balance = BigInt(units(body.balance));
      const total = BigInt(units(body.totalAssets));
      expect(body.percentOfAum, fund.slug).toBe(
        total === 0n ? null : Number((balance * 10_000n + total / 2n) / total) / 100,
      );
    }
  });

  it('GET /v1/funds/{slug}/dividends pages newest first to the end', async () => {
    const slug = firstRound().fund;
    const epochs: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await get(`/v1/funds/${slug}/dividends?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.body.count).toBe(page.body.items.length);
      epochs.push(...page.body.items.map((r: { epoch: number }) => r.epoch));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(epochs).toEqual(
      ledger()
        .rounds.filter((r) => r.fund === slug)
        .map((r) => r.epoch)
        .sort((a, b) => b - a),
    );
  });

  it('GET /v1/funds/{slug}/dividends answers a page holding every round with nextCursor null', async () => {
    const slug = firstRound().fund;
    const epochs = ledger()
      .rounds.filter((r) => r.fund === slug)
      .map((r) => r.epoch)
      .sort((a, b) => b - a);
    const { body } = await get(`/v1/funds/${slug}/dividends?limit=${epochs.length}`);
    expect(body.items.map((r: { epoch: number }) => r.epoch)).toEqual(epochs);
    expect(body.nextCursor).toBeNull();
  });

  it('GET /v1/funds/{slug}/dividends/{epoch} gives the round', async () => {
    const round = firstRound();
    const { body } = await get(`/v1/funds/${round.fund}/dividends/${round.epoch}`);
    expect(body.data).toMatchObject({
      merkleRoot: round.merkleRoot,
      leafCount: round.leafCount,
      uri: round.uri,
    });
    expect(units(body.data.total)).toBe(round.total);
  });

  it('GET /v1/funds/{slug}/dividends/{epoch}/proof gives a proof OpenZeppelin verifies', async () => {
    const round = firstRound();
    const dump = JSON.parse(readFileSync(join(service.stack.devnet.dataDir, round.uri), 'utf8'));
    const [account, amount] = dump.values[0].value as [string, string];
    const { body } = await get(`/v1/funds/${round.fund}/dividends/${round.epoch}/proof?address=${account}`);
    expect(body.data).toMatchObject({ account, amountRaw: amount, epoch: round.epoch });
    expect(
      StandardMerkleTree.verify(round.merkleRoot, ['address', 'uint256'], [account, amount], body.data.proof),
    ).toBe(true);
  });

  it('GET /v1/strategies and /v1/strategies/{slug} give the catalogue', async () => {
    const list = await get('/v1/strategies');
    expect(list.body.count).toBe(service.stack.registry.strategies.length);
    const strategy = service.stack.registry.strategies[0];
    const one = await get(`/v1/strategies/${strategy?.slug}`);
    expect(one.body.data.ratings).toEqual(strategy?.ratings);
  });

  it('GET /v1/events filters by contract, name and block range', async () => {
    const oracle = service.stack.devnet.deployment.contracts.navOracle;
    const { body } = await get(
      `/v1/events?contract=${oracle}&eventName=NavPublished&fromBlock=0&toBlock=${ledger().endBlock}&limit=100`,
    );
    expect(body.items.length).toBeGreaterThan(0);
    for (const event of body.items) {
      expect(event).toMatchObject({
        eventName: 'NavPublished',
        contract: oracle,
        contractName: 'NAV Oracle',
      });
    }
    const blocks = body.items.map((e: { blockNumber: number }) => e.blockNumber);
    expect([...blocks].sort((a, b) => b - a)).toEqual(blocks);
  });

  it('GET /v1/events answers a page holding every matching event with nextCursor null', async () => {
    const registry = service.stack.devnet.deployment.contracts.fundRegistry;
    const registered = ledger().eventCountsByAddress[registry.toLowerCase()]?.FundRegistered;
    expect(registered).toBe(ledger().funds.length);
    const { body } = await get(
      `/v1/events?contract=${registry}&eventName=FundRegistered&limit=${registered}`,
    );
    expect(body.items.map((e: { fund: string }) => e.fund).sort()).toEqual(
      ledger()
        .funds.map((f) => f.slug)
        .sort(),
    );
    expect(body.nextCursor).toBeNull();
  });
});

describe('documentation of the event stream', () => {
  it('names every event kind the indexed stream carries', () => {
    const description = ROUTES.find((r) => r.path === '/v1/events')?.description ?? '';
    const names = emittedEventNames();
    expect(names.size).toBeGreaterThan(10);
    for (const name of names) expect(description, name).toContain(name);
  });

  it('ends each event id with its log index in 4 little-endian bytes, in the example as in the stream', async () => {
    const { body } = await get('/v1/events?limit=100');
    expect(body.items.some((e: { logIndex: number }) => e.logIndex > 0)).toBe(true);
    for (const event of body.items) expect(event.id).toBe(`${event.txHash}${logIndexBytes(event.logIndex)}`);
    const [example] = eventsExample().items;
    expect(example.id).toBe(`${example.txHash}${logIndexBytes(example.logIndex)}`);
  });

  it("documents a vault event's contractName as the vault's registry name it carries", async () => {
    const fund = service.stack.registry.funds[0];
    const { body } = await get(`/v1/events?contract=${fund?.vault}&limit=1`);
    const vault = service.stack.registry.contracts.find((c) => c.address === fund?.vault);
    expect(body.items[0].contractName).toBe(vault?.name);
    const documented = openapi.components.schemas.ProtocolEvent.properties.contractName.description;
    expect(documented).toContain("for a fund vault the vault's name");
  });

  it('gives every address of an event checksummed, its arguments too, as GET /v1/contracts lists them', async () => {
    const { body } = await get('/v1/events?limit=100');
    const listed = new Set(
      (await get('/v1/contracts')).body.items.map((c: { address: string }) => c.address),
    );
    const addresses = body.items.flatMap((e: { contract: string; args: Record<string, unknown> }) => [
      e.contract,
      ...Object.values(e.args).filter(
        (v): v is string => typeof v === 'string' && /^0x[0-9a-fA-F]{40}$/.test(v),
      ),
    ]);
    expect(addresses.length).toBeGreaterThan(body.items.length);
    for (const address of addresses) expect(address).toBe(getAddress(address));
    for (const event of body.items) expect(listed.has(event.contract), event.contract).toBe(true);
  });

  it('gives the events example the registry name of the contract it names', () => {
    const [example] = eventsExample().items;
    const contract = service.stack.registry.contracts.find((c) => c.address === example.contract);
    expect(example.contractName).toBe(contract?.name);
  });
});

describe('problems', () => {
  it('answers an unknown fund slug with the SPEC 404 body', async () => {
    const { status, headers, body } = await get('/v1/funds/no-such-fund/nav');
    expect(status).toBe(404);
    expect(headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(body).toMatchObject({
      type: `${service.base}/problems/not-found`,
      title: 'Not Found',
      status: 404,
      instance: '/v1/funds/no-such-fund/nav',
    });
    expect(body.detail).toContain('/v1/funds');
  });

  it.each(['/v1/strategies/no-such-strategy', '/v1/funds/Not_A_Slug', '/v1/no-such-endpoint'])(
    'answers 404 for %s',
    async (path) => {
      const { status, body } = await get(path);
      expect(status).toBe(404);
      expect(body.instance).toBe(path);
    },
  );

  it('answers a fund slug in another case with 404 naming the registered slug and GET /v1/funds', async () => {
    const { status, body } = await get('/v1/funds/Harbor-Stable-Yield');
    expect(status).toBe(404);
    expect(body.type).toBe(`${service.base}/problems/not-found`);
    expect(body.detail).toBe(
      'No fund has slug "Harbor-Stable-Yield": fund slugs are lowercase letters, digits and single hyphens. Did you mean "harbor-stable-yield"? List fund slugs with GET /v1/funds or the GraphQL query { funds { slug } }.',
    );
  });

  it("answers a fund's display name used as its slug with 404 naming the slug it means", async () => {
    const { status, body } = await get('/v1/funds/Harbor%20Stable%20Yield%20Fund/nav');
    expect(status).toBe(404);
    expect(body.detail).toBe(
      'No fund has slug "Harbor Stable Yield Fund": fund slugs are lowercase letters, digits and single hyphens. Did you mean "harbor-stable-yield"? List fund slugs with GET /v1/funds or the GraphQL query { funds { slug } }.',
    );
  });

  it('answers an unknown strategy slug with 404 naming GET /v1/strategies, in the GraphQL query words too', async () => {
    const { status, body } = await get('/v1/strategies/no-such-strategy');
    expect(status).toBe(404);
    expect(body.detail).toBe(
      'No strategy has slug "no-such-strategy". List strategy slugs with GET /v1/strategies or the GraphQL query { strategies { slug } }.',
    );
  });

  it.each(['', `/proof?address=0x${'12'.repeat(20)}`])(
    'answers an epoch without a round (dividends/3%s) with 404 naming the endpoint listing the round epochs',
    async (rest) => {
      const slug = firstRound().fund;
      const { status, body } = await get(`/v1/funds/${slug}/dividends/3${rest}`);
      expect(status).toBe(404);
      expect(body.detail).toBe(
        `Fund ${slug} has no dividend round for epoch 3; list the epochs of its rounds with GET /v1/funds/${slug}/dividends or the GraphQL query { fund(slug: "${slug}") { dividends { items { epoch } nextCursor } } }.`,
      );
    },
  );

  it('answers an address outside a round with 404 saying it is not a recipient of that round', async () => {
    const round = firstRound();
    const outsider = `0x${'12'.repeat(20)}`;
    const { status, body } = await get(
      `/v1/funds/${round.fund}/dividends/${round.epoch}/proof?address=${outsider}`,
    );
    expect(status).toBe(404);
    expect(body.detail).toBe(
      `Address ${outsider} is not a recipient of dividend round ${round.epoch} of fund ${round.fund}: the round's distribution has no leaf for it. Check the address, or list the fund's rounds with GET /v1/funds/${round.fund}/dividends or the GraphQL query { fund(slug: "${round.fund}") { dividends { items { epoch } nextCursor } } } and ask for another epoch.`,
    );
  });

  it('answers 404 for an epoch without a round and an address without a leaf', async () => {
    const round = firstRound();
    expect((await get(`/v1/funds/${round.fund}/dividends/999999`)).status).toBe(404);
    expect(
      (await get(`/v1/funds/${round.fund}/dividends/${round.epoch}/proof?address=0x${'12'.repeat(20)}`))
        .status,
    ).toBe(404);
  });

  it('serves each problem type URI as a page explaining it', async () => {
    const { body } = await get('/v1/funds/no-such-fund');
    const page = await fetch(body.type);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Not Found');
  });

  const slug = () => ledger().funds[0]?.slug as string;
  const malformed: [string, () => string, string][] = [
    ['from', () => `/v1/funds/${slug()}/nav/history?from=-1`, 'from'],
    ['to', () => `/v1/funds/${slug()}/nav/history?to=abc`, 'to'],
    ['to one below from', () => `/v1/funds/${slug()}/nav/history?from=10&to=9`, 'to'],
    ['limit 0', () => `/v1/funds/${slug()}/nav/history?limit=0`, 'limit'],
    ['limit 501', () => `/v1/funds/${slug()}/nav/history?limit=501`, 'limit'],
    ['limit 1.5', () => `/v1/funds/${slug()}/nav/history?limit=1.5`, 'limit'],
    ['dividends limit', () => `/v1/funds/${slug()}/dividends?limit=101`, 'limit'],
    ['dividends cursor', () => `/v1/funds/${slug()}/dividends?cursor=not-a-cursor`, 'cursor'],
    [
      'dividends cursor past any epoch',
      () => `/v1/funds/${slug()}/dividends?cursor=${Buffer.from('d:99999999999').toString('base64url')}`,
      'cursor',
    ],
    ['epoch', () => `/v1/funds/${slug()}/dividends/x1`, 'epoch'],
    ['address', () => `/v1/funds/${slug()}/dividends/1/proof?address=0x12`, 'address'],
    ['missing address', () => `/v1/funds/${slug()}/dividends/1/proof`, 'address'],
    ['contract', () => '/v1/events?contract=oracle', 'contract'],
    ['eventName', () => '/v1/events?eventName=Nav-Published', 'eventName'],
    ['fromBlock', () => '/v1/events?fromBlock=-5', 'fromBlock'],
    ['toBlock one below fromBlock', () => '/v1/events?fromBlock=10&toBlock=9', 'toBlock'],
    ['events limit', () => '/v1/events?limit=0', 'limit'],
    ['events cursor', () => `/v1/events?cursor=${Buffer.from('d:5').toString('base64url')}`, 'cursor'],
    ['repeated parameter', () => '/v1/events?limit=5&limit=6', 'limit'],
    ['unknown parameter', () => '/v1/protocol?verbose=1', 'verbose'],
  ];
  it.each(malformed)('answers 400 naming the parameter: %s', async (_name, path, parameter) => {
    const { status, body } = await get(path());
    expect(status).toBe(400);
    expect(body).toMatchObject({
      type: `${service.base}/problems/invalid-parameter`,
      title: 'Bad Request',
      status: 400,
      parameter,
    });
    expect(body.detail).toContain(parameter);
  });

  it('answers a negative to, sent without from, with a detail about to alone', async () => {
    const { status, body } = await get(`/v1/funds/${slug()}/nav/history?to=-3`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      parameter: 'to',
      detail: "Parameter 'to' must be an integer from 0 to 2147483647; got '-3'.",
    });
  });

  it.each(['navpublished', 'nav_published', 'nav-published', 'Nav Published', 'NAV_PUBLISHED'])(
    'refuses the eventName %s with 400 suggesting the exact name',
    async (written) => {
      const { status, body } = await get(`/v1/events?eventName=${encodeURIComponent(written)}`);
      expect(status).toBe(400);
      expect(body.parameter).toBe('eventName');
      expect(body.detail).toMatch(
        new RegExp(
          `; got '${written}'\\. Did you mean 'NavPublished'\\? Names are case-sensitive and written as listed\\.$`,
        ),
      );
    },
  );

  it('refuses an epoch written as a date with 400 saying epochs are numbers and where to find them', async () => {
    const { status, body } = await get(`/v1/funds/${slug()}/dividends/2025-01-31`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      parameter: 'epoch',
      detail:
        "Parameter 'epoch' must be an integer from 0 to 2147483647: a daily settlement epoch number, counted per fund from 1, not a date (GET /v1/funds/{slug}/dividends lists the rounds' epochs; GET /v1/funds/{slug}/nav/history dates each epoch by settledAt, the time of its settlement); got '2025-01-31'.",
    });
  });

  it('refuses a GraphQL GET over the URL limit with 414 telling to POST the query, which then answers', async () => {
    const query = `{ funds { slug ${'name '.repeat(MAX_URL_LENGTH / 5)}} }`;
    const refused = await fetch(`${service.base}/graphql?query=${encodeURIComponent(query)}`, {
      headers: { accept: 'application/json' },
    });
    expect(refused.status).toBe(414);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(
      /; at most 2048 are accepted\. Send a query this long with POST \/graphql, /,
    );
    const posted = await fetch(`${service.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    expect(posted.status).toBe(200);
    expect(((await posted.json()) as { data: { funds: unknown[] } }).data.funds).toHaveLength(
      service.stack.registry.funds.length,
    );
  });

  it('refuses a /v1 URL over the limit with 414 saying every valid /v1 request fits', async () => {
    const { status, body } = await get(`/v1/funds/${slug()}/nav/history?to=${'9'.repeat(MAX_URL_LENGTH)}`);
    expect(status).toBe(414);
    expect(body.detail).toMatch(
      /; at most 2048 are accepted\. Every valid \/v1 request fits well within the limit\.$/,
    );
  });

  it('refuses an eventName the stream does not carry with 400 listing every name it carries', async () => {
    const { status, body } = await get('/v1/events?eventName=Transfer');
    expect(status).toBe(400);
    expect(body.parameter).toBe('eventName');
    expect(body.detail).toMatch(
      /^Parameter 'eventName' must be one of these event names, exactly as written \(case-sensitive\): /,
    );
    for (const name of emittedEventNames()) expect(body.detail, name).toContain(name);
    expect(body.detail).not.toContain('Did you mean');
  });

  it('answers 410 for deprecated endpoints, naming the replacement', async () => {
    const { status, body } = await get(`/v1/nav/${slug()}`);
    expect(status).toBe(410);
    expect(body.detail).toContain(`/v1/funds/${slug()}/nav`);
    expect((await get(`/v1/funds/${slug()}/navs`)).status).toBe(410);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'])(
    'answers %s with 405 and Allow on /v1 and the documents',
    async (method) => {
      for (const path of ['/v1/funds', '/v1/no-such', '/openapi.json', '/.well-known/agents.json']) {
        const { status, headers, body } = await get(path, { method });
        expect(status, path).toBe(405);
        expect(headers.get('allow')).toBe('GET, HEAD, OPTIONS');
        expect(body.type).toBe(`${service.base}/problems/method-not-allowed`);
      }
    },
  );

  it('answers 503 with Retry-After, never cached, when the subgraph is down', async () => {
    const gateway = testGateway(service.stack, {
      subgraph: { url: 'http://127.0.0.1:9/down', timeoutMs: 2_000, maxBatch: 10 },
    });
    const server = await listenRest(gateway, { responseCacheEntries: 100 });
    try {
      const { status, headers, body } = await call(server.url, '/v1/funds');
      expect(status).toBe(503);
      expect(headers.get('retry-after')).toMatch(/^\d+$/);
      expect(headers.get('cache-control')).toBe('no-store');
      expect(body.detail).not.toMatch(/fetch|ECONNREFUSED|127\.0\.0\.1/);
    } finally {
      await server.close();
    }
  });
});

describe('NAV history', () => {
  const slug = () => ledger().funds[0]?.slug as string;
  const epochsOf = () =>
    ledger()
      .navRecords.filter((r) => r.fund === slug())
      .map((r) => r.epoch)
      .sort((a, b) => a - b);

  it('returns the last 90 epochs ascending when no parameter is given', async () => {
    const { body } = await get(`/v1/funds/${slug()}/nav/history`);
    expect(epochsOf().length).toBeGreaterThan(90);
    expect(body.points.map((p: { epoch: number }) => p.epoch)).toEqual(epochsOf().slice(-90));
  });

  it('returns at most limit points, from `from` onwards, up to `to`', async () => {
    const all = epochsOf();
    expect(
      (await get(`/v1/funds/${slug()}/nav/history?limit=1`)).body.points.map(
        (p: { epoch: number }) => p.epoch,
      ),
    ).toEqual(all.slice(-1));
    const ranged = await get(`/v1/funds/${slug()}/nav/history?from=10&to=40&limit=5`);
    expect(ranged.body.points.map((p: { epoch: number }) => p.epoch)).toEqual(
      all.filter((e) => e >= 10 && e <= 40).slice(0, 5),
    );
    const full = await get(`/v1/funds/${slug()}/nav/history?from=0&limit=500`);
    expect(full.body.points.map((p: { epoch: number }) => p.epoch)).toEqual(all.slice(0, 500));
  });

  it.each(['01', '00000000000000001', `${'0'.repeat(100)}1`])(
    'reads a limit padded with zeros as its value, however many pad it (%s)',
    async (limit) => {
      const { status, body } = await get(`/v1/funds/${slug()}/nav/history?limit=${limit}`);
      expect(status).toBe(200);
      expect(body.points.map((p: { epoch: number }) => p.epoch)).toEqual(epochsOf().slice(-1));
    },
  );

  it('refuses a padded limit beyond its maximum, naming the rule', async () => {
    const { status, body } = await get(`/v1/funds/${slug()}/nav/history?limit=0000000000000000501`);
    expect(status).toBe(400);
    expect(body).toMatchObject({
      parameter: 'limit',
      detail: "Parameter 'limit' must be an integer from 1 to 500; got '0000000000000000501'.",
    });
  });
});

describe('caching', () => {
  const tiers: [string, () => string, number][] = [
    ['protocol', () => '/v1/protocol', 3600],
    ['contracts', () => '/v1/contracts', 3600],
    ['policies', () => '/v1/policies', 3600],
    ['strategies', () => '/v1/strategies', 3600],
    ['latest NAV', () => `/v1/funds/${ledger().funds[0]?.slug}/nav`, 30],
    ['NAV history', () => `/v1/funds/${ledger().funds[0]?.slug}/nav/history`, 300],
    ['dividends', () => `/v1/funds/${firstRound().fund}/dividends`, 300],
    ['health', () => '/v1/health', 15],
    ['events', () => '/v1/events', 15],
  ];
  it.each(tiers)('gives %s its SPEC lifetime', async (_tier, path, maxAge) => {
    const { status, headers } = await get(path());
    expect(status).toBe(200);
    expect(headers.get('cache-control')).toBe(`public, max-age=${maxAge}`);
    expect(headers.get('etag')).toMatch(/^"[\w-]+"$/);
  });

  // what the documents' list of tiers calls each route
  const documentedAs: Record<string, string> = {
    '/v1/protocol': 'protocol',
    '/v1/contracts': 'contracts',
    '/v1/policies': 'policies',
    '/v1/health': 'health',
    '/v1/funds': 'fund list',
    '/v1/funds/{slug}': 'fund detail',
    '/v1/funds/{slug}/nav': 'latest NAV',
    '/v1/funds/{slug}/nav/history': 'NAV history',
    '/v1/funds/{slug}/allocations': 'allocations',
    '/v1/funds/{slug}/reserve': 'reserve',
    '/v1/funds/{slug}/dividends': 'dividends',
    '/v1/funds/{slug}/dividends/{epoch}': 'rounds',
    '/v1/funds/{slug}/dividends/{epoch}/proof': 'proofs',
    '/v1/strategies': 'strategies',
    '/v1/strategies/{slug}': 'strategies',
    '/v1/events': 'events',
  };
  it("puts every route in the tier llms-full.txt's list of tiers names it under", async () => {
    const tiersListed = [
      ...(await get('/llms-full.txt')).text.matchAll(/^- ([\w-]+): \d+ seconds \((.*)\)$/gm),
    ];
    expect(tiersListed.map(([, tier]) => tier)).toEqual(['reference', 'latest-nav', 'history', 'live']);
    expect(ROUTES.map((route) => route.path)).toEqual(Object.keys(documentedAs));
    for (const route of ROUTES) {
      const name = new RegExp(`\\b${documentedAs[route.path]}\\b`);
      const listedUnder = tiersListed
        .filter(([, , covers]) => name.test(covers ?? ''))
        .map(([, tier]) => tier);
      expect(listedUnder, route.path).toEqual([route.tier]);
    }
  });

  it('answers If-None-Match with 304 and the same validators', async () => {
    const path = `/v1/funds/${ledger().funds[0]?.slug}/nav/history?limit=30`;
    const first = await get(path);
    const etag = first.headers.get('etag') as string;
    const again = await get(path, { headers: { 'If-None-Match': etag } });
    expect(again.status).toBe(304);
    expect(again.text).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('cache-control')).toBe(first.headers.get('cache-control'));
    const other = await get(path, { headers: { 'If-None-Match': '"something-else"' } });
    expect(other.status).toBe(200);
  });

  it('answers 304 to an If-None-Match list holding the ETag, strong or weak, and 200 to one without it', async () => {
    const path = `/v1/funds/${ledger().funds[0]?.slug}/nav/history?limit=30`;
    const etag = (await get(path)).headers.get('etag') as string;
    for (const tags of [`"something-else", ${etag}`, `W/${etag}`, `"something-else", W/${etag}`])
      expect((await get(path, { headers: { 'If-None-Match': tags } })).status, tags).toBe(304);
    const without = await get(path, { headers: { 'If-None-Match': '"something-else", W/"another"' } });
    expect(without.status).toBe(200);
  });

  it('gives the same ETag to the same data and a different one to different data', async () => {
    const slug = ledger().funds[0]?.slug;
    const a = await get(`/v1/funds/${slug}/nav/history?limit=10`);
    const b = await get(`/v1/funds/${slug}/nav/history?limit=10`);
    const c = await get(`/v1/funds/${slug}/nav/history?limit=11`);
    expect(b.headers.get('etag')).toBe(a.headers.get('etag'));
    expect(c.headers.get('etag')).not.toBe(a.headers.get('etag'));
  });

  it('never lets a shared cache store an error', async () => {
    expect((await get('/v1/funds/no-such-fund')).headers.get('cache-control')).toBe('no-store');
  });
});

describe('headers on every response', () => {
  it('allows every origin, on success, errors and preflight', async () => {
    for (const path of ['/v1/funds', '/v1/funds/no-such', '/openapi.json']) {
      expect((await get(path)).headers.get('access-control-allow-origin'), path).toBe('*');
    }
    const preflight = await get('/v1/funds', {
      method: 'OPTIONS',
      headers: { Origin: 'https://agent.example', 'Access-Control-Request-Method': 'GET' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')).toContain('GET');
  });

  it('links the OpenAPI document, hides the framework and sets security headers', async () => {
    const { headers } = await get('/v1/protocol');
    expect(headers.get('link')).toBe(`<${service.base}/openapi.json>; rel="service-desc"`);
    expect(headers.get('x-powered-by')).toBeNull();
    expect(headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('says which indexed block the data reflects and how far behind the head it is', async () => {
    const { headers } = await get('/v1/events?limit=1');
    expect(Number(headers.get('x-indexed-block'))).toBeGreaterThanOrEqual(ledger().endBlock);
    expect(headers.get('x-indexed-block-lag')).toBe('0');
    expect(headers.get('x-indexed-at')).toMatch(/^\d{4}-\d\d-\d\dT/);
  });
});

describe('/graphql beside the REST surface', () => {
  const protocolVersion = '{ protocol { version } }';

  it('answers a query sent with GET', async () => {
    const response = await fetch(`${service.base}/graphql?query=${encodeURIComponent(protocolVersion)}`, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { protocol: { version: '1.0.0' } } });
  });

  it('answers a query sent with POST', async () => {
    const response = await fetch(`${service.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: protocolVersion }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { protocol: { version: '1.0.0' } } });
  });

  it('lets a page of any origin read its answers', async () => {
    const viaGet = await fetch(`${service.base}/graphql?query=${encodeURIComponent(protocolVersion)}`, {
      headers: { accept: 'application/json', origin: 'https://agent.example' },
    });
    expect(viaGet.headers.get('access-control-allow-origin')).toBe('*');
    const viaPost = await fetch(`${service.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://agent.example' },
      body: JSON.stringify({ query: protocolVersion }),
    });
    expect(viaPost.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('serves a browser no GraphiQL page, but a 406 naming the media types it answers', async () => {
    const browser = await fetch(`${service.base}/graphql`, { headers: { accept: 'text/html' } });
    expect(browser.status).toBe(406);
    expect(browser.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await browser.json()) as { type: string; detail: string };
    expect(problem.type).toBe(`${service.base}/problems/not-acceptable`);
    expect(problem.detail).toContain('application/json');
  });

  it('tells which indexed block the data of its answer reflects, in the headers /v1 answers carry', async () => {
    const query = encodeURIComponent('{ events(limit: 1) { items { blockNumber } } }');
    const graphql = await fetch(`${service.base}/graphql?query=${query}`, {
      headers: { accept: 'application/json' },
    });
    const rest = await fetch(`${service.base}/v1/events?limit=1`);
    expect(graphql.headers.get('x-indexed-block')).toBe(rest.headers.get('x-indexed-block'));
    expect(graphql.headers.get('x-indexed-at')).toBe(rest.headers.get('x-indexed-at'));
    expect(graphql.headers.get('x-indexed-block-lag')).toBe('0');
    expect(Number(graphql.headers.get('x-data-lag-seconds'))).toBeGreaterThan(0);
    // an answer from the registry alone reflects no indexed block
    const registryOnly = await fetch(
      `${service.base}/graphql?query=${encodeURIComponent('{ protocol { name } }')}`,
      {
        headers: { accept: 'application/json' },
      },
    );
    expect(registryOnly.headers.get('x-indexed-block')).toBeNull();
  });

  it("answers the documents' one-request recipe with each round's proof of an address, as the proof endpoint gives it", async () => {
    const round = firstRound();
    const dump = JSON.parse(readFileSync(join(service.stack.devnet.dataDir, round.uri), 'utf8'));
    const [account] = dump.values[0].value as [string, string];
    const response = await fetch(`${service.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: claimableDividendsQuery(round.fund, account) }),
    });
    const { data, errors } = (await response.json()) as {
      data: { fund: { dividends: { items: { epoch: number; proof: unknown }[]; nextCursor: null } } };
      errors?: { path: (string | number)[]; extensions: { code: string } }[];
    };
    const { items, nextCursor } = data.fund.dividends;
    expect(nextCursor).toBeNull();
    const expected = [];
    for (const [i, { epoch }] of items.entries()) {
      const proof = await get(`/v1/funds/${round.fund}/dividends/${epoch}/proof?address=${account}`);
      expected.push({
        epoch,
        proof:
          proof.status === 404
            ? null
            : {
                amount: proof.body.data.amount,
                amountRaw: proof.body.data.amountRaw,
                claimed: proof.body.data.claimed,
                claim: { to: proof.body.data.claim.to, data: proof.body.data.claim.data },
              },
      });
      if (proof.status === 404) {
        expect(
          errors?.find((e) => e.path.join('.') === `fund.dividends.items.${i}.proof`)?.extensions,
        ).toEqual({
          code: 'NOT_FOUND',
        });
      }
    }
    expect(items).toEqual(expected);
    expect(items.map((r) => r.epoch)).toEqual(
      ledger()
        .rounds.filter((r) => r.fund === round.fund)
        .map((r) => r.epoch)
        .sort((a, b) => b - a),
    );
    expect(items.some((r) => r.proof !== null)).toBe(true);
  });

  it('refuses a batched request with 400 and BAD_INPUT', async () => {
    const response = await fetch(`${service.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ query: '{ protocol { name } }' }, { query: '{ protocol { slug } }' }]),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      errors: [{ message: 'Batching is not supported.', extensions: { code: 'BAD_INPUT' } }],
    });
  });
});

describe('discovery documents', () => {
  it('serves openapi.json for its own base URL', async () => {
    const { body, headers } = await get('/openapi.json');
    expect(body.openapi).toBe('3.1.0');
    expect(body.servers).toEqual([{ url: service.base }]);
    expect(headers.get('etag')).toBeTruthy();
  });

  /** GET `path` with the given Host header, which fetch() cannot set. */
  const getWithHost = (path: string, host: string) =>
    new Promise<{ servers: { url: string }[] }>((resolve, reject) => {
      const req = request(`${service.base}${path}`, { headers: { host } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
      });
      req.on('error', reject);
      req.end();
    });

  it('serves openapi.json for the base each Host names, also after many other Hosts', async () => {
    expect((await getWithHost('/openapi.json', 'first.example')).servers).toEqual([
      { url: 'http://first.example' },
    ]);
    for (let i = 0; i < 20; i++) await getWithHost('/openapi.json', `forged-${i}.example`);
    expect((await getWithHost('/openapi.json', 'first.example')).servers).toEqual([
      { url: 'http://first.example' },
    ]);
    expect((await get('/openapi.json')).body.servers).toEqual([{ url: service.base }]);
  });

  it.each([
    [
      '/llms.txt',
      'text/plain',
      (text: string) => {
        // llmstxt.org: the title, the summary as a quote, and link lists under second-level headings
        const lines = text.split('\n');
        expect(lines[0]).toBe('# Fund Protocol Data Service');
        expect(lines[2]).toMatch(/^> \S/);
        expect(lines.filter((line) => line.startsWith('## '))).toEqual([
          '## Docs',
          '## Endpoints',
          '## Optional',
        ]);
        expect(text).toContain(`(${service.base}/llms-full.txt)`);
        expect(text).toContain(`(${service.base}/openapi.json)`);
        // a line for every route, once (the endpoint list is written from the route table)
        for (const route of ROUTES) {
          const named = lines.filter(
            (line) => line.startsWith(`- [GET ${route.path}](`) || line.startsWith(`- GET ${route.path}: `),
          );
          expect(named, route.path).toHaveLength(1);
        }
      },
    ],
    [
      '/llms-full.txt',
      'text/plain',
      (text: string) => {
        const lines = text.split('\n');
        expect(lines[0]).toBe('# Fund Protocol Data Service: full reference');
        expect(text).toContain(`Base URL: ${service.base}.`);
        for (const heading of [
          '## Conventions',
          '## Errors',
          '## Limits',
          '## Caching',
          '## GraphQL',
          '## Endpoints',
        ])
          expect(lines, heading).toContain(heading);
        // a section for every route
        for (const route of ROUTES) expect(lines, route.path).toContain(`### GET ${route.path}`);
      },
    ],
    [
      '/.well-known/ai-plugin.json',
      'application/json',
      (text: string) => {
        expect(JSON.parse(text)).toMatchObject({
          schema_version: 'v1',
          name_for_model: 'fund_protocol_data',
          auth: { type: 'none' },
          api: { type: 'openapi', url: `${service.base}/openapi.json` },
          contact_email: service.stack.registry.protocol.contactEmail,
        });
      },
    ],
    [
      '/.well-known/agents.json',
      'application/json',
      (text: string) => {
        const agents = JSON.parse(text) as {
          agentsJson: string;
          sources: { id: string; path: string }[];
          flows: { id: string; actions: { sourceId: string; operationId: string }[] }[];
        };
        expect(agents.agentsJson).toBe('0.1.0');
        expect(agents.sources).toEqual([{ id: expect.any(String), path: `${service.base}/openapi.json` }]);
        expect(agents.flows.map((flow) => flow.id)).toEqual(['fund_nav_lookup', 'dividend_claim_proof']);
        // every action runs an operation of the source, which the route table has
        const operationIds = new Set(ROUTES.map((route) => route.operationId));
        for (const action of agents.flows.flatMap((flow) => flow.actions)) {
          expect(action.sourceId).toBe(agents.sources[0]!.id);
          expect(operationIds, action.operationId).toContain(action.operationId);
        }
      },
    ],
  ])('serves %s, a %s document with its key content', async (path, type, expectContent) => {
    const { status, headers, text } = await get(path);
    expect(status).toBe(200);
    expect(headers.get('content-type')).toContain(type);
    expectContent(text);
  });

  it('serves at / the links to everything, each of which answers', async () => {
    const { status, body } = await get('/');
    expect(status).toBe(200);
    const links = body.links as Record<string, string>;
    expect(links.openapi).toBe(`${service.base}/openapi.json`);
    // every discovery document but the index itself
    const documents = Object.values(DISCOVERY_DOCUMENTS).filter((d) => d.path !== '/');
    expect(
      documents.map((d) => `${service.base}${d.path}`).filter((url) => !Object.values(links).includes(url)),
    ).toEqual([]);
    for (const [name, link] of Object.entries(links)) {
      // /graphql needs a query to answer; its schema link is what a client reads first
      if (name === 'graphql') continue;
      expect((await fetch(link)).status, link).toBe(200);
    }
  });

  it('serves the GraphQL schema as SDL, the committed schema.graphql to the byte', async () => {
    const { status, headers, text } = await get('/schema.graphql');
    expect(status).toBe(200);
    expect(headers.get('content-type')).toContain('text/plain');
    expect(text).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
  });
});
