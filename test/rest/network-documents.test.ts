// A service over another network's registry documents that registry, never the devnet's: its
// discovery documents carry the registry's slugs, names, addresses, chain and links, and none of
// the devnet's, and they show no example of indexed data (an epoch, a recipient, a block) that
// only the devnet scenario is known to hold. The registry here is registry/devnet.json with every
// value the documents can show changed; no chain serves it, which the documents do not need. Over the
// devnet registry with another scenario seeded, the indexed-data examples are left out too.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRegistry, type Registry } from '../../gateway/sources/registry.ts';
import { DOCUMENT_PATHS } from '../../rest/documents.ts';
import { listen, REGISTRY_FILE, registryOnlyRestApp } from '../harness/stack.ts';

const devnet = JSON.parse(readFileSync(REGISTRY_FILE, 'utf8')) as Registry;

/** the devnet registry with each value the documents can show replaced by another network's */
function otherNetwork(): Registry {
  let counter = 0;
  const newAddress = () => `0x${(0xa11ce000 + ++counter).toString(16).padStart(40, '0')}`;
  const addresses = new Map<string, string>();
  const renamed = (address: string) => {
    const key = address.toLowerCase();
    if (!addresses.has(key)) addresses.set(key, newAddress());
    return addresses.get(key) as string;
  };
  const text = JSON.stringify(devnet)
    .replace(/0x[0-9a-fA-F]{40}/g, renamed)
    .replaceAll('"slug":"', '"slug":"sepolia-')
    .replaceAll('"policy":"', '"policy":"sepolia-')
    .replaceAll('/funds/', '/funds/sepolia-')
    .replaceAll('"name":"', '"name":"Sepolia ')
    .replaceAll('Meridian', 'Tidewater')
    .replaceAll('meridian', 'tidewater')
    .replaceAll('Harbor', 'Quay')
    .replaceAll('devnet-explorer.', 'sepolia-explorer.');
  const registry = JSON.parse(text) as Registry;
  registry.network = 'sepolia';
  registry.chain = {
    id: 11155111,
    name: 'Sepolia',
    explorer: 'https://sepolia.etherscan.io',
    isTestnet: true,
  };
  return parseRegistry(registry, 'test: other network');
}

/** values of the devnet registry no document of another network may show */
function devnetValues(): string[] {
  const values = new Set<string>([
    devnet.chain.name,
    devnet.chain.explorer,
    devnet.protocol.name,
    devnet.protocol.docs,
    // the devnet scenario's dividend recipient
    '0x7dE67bF9C98a9616A035f68674c3cAb85e498E66',
  ]);
  for (const address of JSON.stringify(devnet).match(/0x[0-9a-fA-F]{40}/g) ?? [])
    values.add(address.toLowerCase());
  for (const item of [...devnet.funds, ...devnet.strategies]) {
    values.add(`/${item.slug}`);
    values.add(`"${item.slug}"`);
  }
  // a policy slug may also be a policy kind ("fractional-kelly"): only as a slug is it the devnet's
  for (const policy of devnet.policies) values.add(`"slug": "${policy.slug}"`);
  // policy names are SPEC's (ThreePoolPolicy, KellyPolicy), the same on every network
  for (const item of [...devnet.funds, ...devnet.strategies]) values.add(`"${item.name}"`);
  return [...values];
}

const registry = otherNetwork();
let base: string;
let close: () => Promise<void>;
const served = new Map<string, string>();

beforeAll(async () => {
  const app = registryOnlyRestApp({ registry });
  ({ url: base, close } = await listen(app));
  for (const path of DOCUMENT_PATHS) {
    const response = await fetch(`${base}${path}`);
    expect(response.status, path).toBe(200);
    served.set(path, await response.text());
  }
});
afterAll(async () => {
  await close?.();
});

describe('the discovery documents of a service over another registry', () => {
  it.each(DOCUMENT_PATHS)('%s shows none of the devnet registry', (path) => {
    const document = (served.get(path) as string).toLowerCase();
    const shown = devnetValues().filter((value) => document.includes(value.toLowerCase()));
    expect(shown).toEqual([]);
    // the devnet's chain id only where the schema says it is the devnet's
    expect(document.replaceAll('(31337 on the local devnet)', '')).not.toContain('31337');
  });

  it("documents the registry's chain, protocol, contracts and example slugs", () => {
    const openapi = served.get('/openapi.json') as string;
    const full = served.get('/llms-full.txt') as string;
    const [fund] = registry.funds;
    const oracle = registry.contracts.find((c) => c.kind === 'NavOracle');
    for (const document of [openapi, full]) {
      expect(document).toContain(`"id": ${registry.chain.id}`);
      expect(document).toContain(registry.chain.name);
      expect(document).toContain(registry.protocol.name);
      expect(document).toContain(fund?.vault);
      expect(document).toContain(`/v1/funds/${fund?.slug}`);
      expect(document).toContain(`${registry.chain.explorer}/address/${oracle?.address}`);
    }
    const events = JSON.parse(openapi) as {
      paths: { '/v1/events': { get: { parameters: { name: string; example?: unknown }[] } } };
    };
    const contract = events.paths['/v1/events'].get.parameters.find((p) => p.name === 'contract');
    expect(contract?.example).toBe(oracle?.address);
  });

  it('gives no example of indexed data, and says why', () => {
    const openapi = JSON.parse(served.get('/openapi.json') as string) as {
      info: { description: string };
      paths: Record<string, { get?: { parameters?: { name: string; example?: unknown }[] } }>;
    };
    const examples = Object.fromEntries(
      Object.values(openapi.paths).flatMap((item) =>
        (item.get?.parameters ?? []).map((p) => [p.name, p.example]),
      ),
    );
    for (const name of ['epoch', 'address', 'from', 'to', 'fromBlock', 'toBlock', 'cursor'])
      expect(examples[name], name).toBeUndefined();
    expect(openapi.info.description).toContain('Examples of indexed or live data');
    // the endpoints needing an epoch are listed without a request that could not work
    expect(served.get('/llms.txt')).toContain('- GET /v1/funds/{slug}/dividends/{epoch}/proof: ');
    expect(served.get('/llms-full.txt')).not.toMatch(/Example: GET \S*\/dividends\/\{?\d/);
  });
});

describe('the discovery documents of a devnet seeded with another scenario (SCENARIO_* changed)', () => {
  it('give no example of indexed data, since the default scenario is not what is served', async () => {
    const app = registryOnlyRestApp({ defaultScenario: false });
    const server = await listen(app);
    try {
      const openapi = await fetch(`${server.url}/openapi.json`).then((r) => r.text());
      expect(openapi).toContain('Examples of indexed or live data');
      expect(openapi).not.toContain('"epoch": 11');
      expect(openapi).not.toContain('0x7dE67bF9C98a9616A035f68674c3cAb85e498E66');
      // the registry is the devnet's, so its slugs are still the examples
      expect(openapi).toContain('/v1/funds/harbor-stable-yield');
    } finally {
      await server.close();
    }
  });
});
