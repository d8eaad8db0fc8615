// The static registry source: one JSON file per network (protocol, chain, contracts,
// policies, funds, strategies). It is validated once at start-up so that a typo in the
// file stops the service with a message naming the file and the field, instead of
// surfacing later as a wrong answer. Every field is described in registry/README.md (a test keeps
// it in step with registrySchema); registry/sepolia.json is a template whose zero addresses are
// refused until the protocol's deployed addresses are filled in.
import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ADDRESS_PATTERN, SLUG_PATTERN } from '../inputs.ts';

export interface RegistryContract {
  name: string;
  kind: ContractKind;
  address: string;
  role: string;
  roleEn: string;
  category: string;
}

const CONTRACT_KINDS = [
  'NavOracle',
  'DividendDistributor',
  'FundRegistry',
  'FundVault',
  'FundShareToken',
  'ThreePoolPolicy',
  'KellyPolicy',
  // a base-asset token (an ERC-20 such as USDC)
  'ERC20',
  // the devnet's stand-in base asset (devnet/contracts)
  'MockUSDC',
] as const;
type ContractKind = (typeof CONTRACT_KINDS)[number];

export const POLICY_KINDS = ['fixed-plus-float', 'fractional-kelly'] as const;
type PolicyKind = (typeof POLICY_KINDS)[number];

export interface RegistryPolicy {
  slug: string;
  name: string;
  kind: PolicyKind;
  address: string;
  description: string;
}

export interface RegistryFund {
  slug: string;
  name: string;
  nameCn: string;
  policy: string;
  vault: string;
  shareToken: string;
  multisig: string;
  baseAsset: { symbol: string; address: string; decimals: number };
  since: string;
  links: { website: string; portal: string };
}

export interface RegistryStrategy {
  slug: string;
  name: string;
  nameCn: string;
  address: string;
  category: string;
  description: string;
  ratings: {
    quantitative: {
      sharpe: number;
      maxDrawdownBps: number;
      volatilityBps: number;
      annualReturnBps: number;
      score: number;
    };
    qualitative: {
      grade: 'A' | 'B' | 'C' | 'D' | 'E';
      risk: 'low' | 'medium' | 'high';
      liquidity: string;
      summary: string;
    };
  };
}

export interface Registry {
  network: string;
  /** `version` is not the registry's: SPEC makes the protocol record's version the API version */
  protocol: { name: string; slug: string; deployedAt: string; docs: string; contactEmail: string };
  chain: { id: number; name: string; explorer: string; isTestnet: boolean };
  contracts: RegistryContract[];
  policies: RegistryPolicy[];
  funds: RegistryFund[];
  strategies: RegistryStrategy[];
}

const address = { type: 'string', pattern: ADDRESS_PATTERN };
const text = { type: 'string', minLength: 1 };
const slug = { type: 'string', pattern: SLUG_PATTERN };
const date = { type: 'string', format: 'date' };
const url = { type: 'string', format: 'uri' };
const bps = { type: 'integer', minimum: 0, maximum: 10000 };
const ZERO_ADDRESS = /^0x0{40}$/;

function record(properties: Record<string, unknown>): Record<string, unknown> {
  return { type: 'object', additionalProperties: false, required: Object.keys(properties), properties };
}

export const registrySchema = record({
  network: text,
  protocol: record({
    name: text,
    slug,
    deployedAt: date,
    docs: url,
    contactEmail: { type: 'string', format: 'email' },
  }),
  chain: record({
    id: { type: 'integer', minimum: 1 },
    name: text,
    explorer: url,
    isTestnet: { type: 'boolean' },
  }),
  contracts: {
    type: 'array',
    minItems: 1,
    items: record({
      name: text,
      kind: { enum: CONTRACT_KINDS },
      address,
      role: text,
      roleEn: text,
      category: text,
    }),
  },
  policies: {
    type: 'array',
    minItems: 1,
    items: record({
      slug,
      name: text,
      kind: { enum: POLICY_KINDS },
      address,
      description: text,
    }),
  },
  funds: {
    type: 'array',
    minItems: 1,
    items: record({
      slug,
      name: text,
      nameCn: text,
      policy: slug,
      vault: address,
      shareToken: address,
      multisig: address,
      baseAsset: record({ symbol: text, address, decimals: { type: 'integer', minimum: 0, maximum: 36 } }),
      since: date,
      links: record({ website: url, portal: url }),
    }),
  },
  strategies: {
    type: 'array',
    minItems: 1,
    items: record({
      slug,
      name: text,
      nameCn: text,
      address,
      category: text,
      description: text,
      ratings: record({
        quantitative: record({
          sharpe: { type: 'number' },
          maxDrawdownBps: bps,
          volatilityBps: bps,
          annualReturnBps: { type: 'integer' },
          score: { type: 'number', minimum: 0, maximum: 100 },
        }),
        qualitative: record({
          grade: { enum: ['A', 'B', 'C', 'D', 'E'] },
          risk: { enum: ['low', 'medium', 'high'] },
          liquidity: text,
          summary: text,
        }),
      }),
    }),
  },
});

class RegistryError extends Error {
  override name = 'RegistryError';
}

// verbose: an error carries its schema, whose field names an unknown field's message lists.
// ajv-formats is CommonJS with a default export; under NodeNext the callable is `.default`.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const validateRegistry = (() => {
  const ajv = new Ajv({ allErrors: true, strict: true, verbose: true });
  addFormats(ajv);
  return ajv.compile(registrySchema);
})();

/** `/funds/0/vault` -> `funds[0].vault` */
function fieldPath(error: ErrorObject): string {
  const parts = error.instancePath.split('/').slice(1);
  if (error.keyword === 'required') parts.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') parts.push(String(error.params.additionalProperty));
  let out = '';
  for (const part of parts) out += /^\d+$/.test(part) ? `[${part}]` : out ? `.${part}` : part;
  return out || '(root)';
}

/** what is wrong, in words that say what to write instead */
function ruleOf(error: ErrorObject): string {
  switch (error.keyword) {
    case 'enum':
      return `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'additionalProperties':
      return `is not a registry field (the fields here: ${Object.keys(
        (error.parentSchema as { properties: object }).properties,
      ).join(', ')})`;
    case 'pattern':
      if (error.params.pattern === address.pattern) return 'must be a 0x-prefixed address of 40 hex digits';
      if (error.params.pattern === slug.pattern)
        return 'must be lowercase letters and digits in words joined by single hyphens';
      break;
  }
  return error.message ?? 'is invalid';
}

/** the fields holding the zero address, as `funds[0].vault` */
function zeroAddressFields(value: unknown, at: string): string[] {
  if (typeof value === 'string') return ZERO_ADDRESS.test(value) ? [at] : [];
  if (Array.isArray(value)) return value.flatMap((item, i) => zeroAddressFields(item, `${at}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([key, item]) => zeroAddressFields(item, at ? `${at}.${key}` : key));
  return [];
}

/** Validates parsed JSON as a registry; `file` only names the source in messages. */
export function parseRegistry(json: unknown, file: string): Registry {
  if (!validateRegistry(json)) {
    const problems = (validateRegistry.errors ?? []).map((e) => `field ${fieldPath(e)} ${ruleOf(e)}`);
    throw new RegistryError(`Invalid registry ${file}: ${problems.join('; ')}`);
  }
  const registry = json as Registry;
  // a template (registry/sepolia.json) keeps the zero address where a deployed address goes
  const unfilled = zeroAddressFields(registry, '');
  if (unfilled.length) {
    throw new RegistryError(
      `Invalid registry ${file}: field ${unfilled.join(', ')} ${unfilled.length === 1 ? 'is' : 'are'} the zero address: write the address the protocol is deployed at on ${registry.network} (registry/README.md)`,
    );
  }
  const fail = (field: string, rule: string): never => {
    throw new RegistryError(`Invalid registry ${file}: field ${field} ${rule}`);
  };
  const unique = (list: { slug: string }[], name: string) => {
    const seen = new Set<string>();
    list.forEach((item, i) => {
      if (seen.has(item.slug)) fail(`${name}[${i}].slug`, `repeats slug "${item.slug}"`);
      seen.add(item.slug);
    });
  };
  unique(registry.policies, 'policies');
  unique(registry.funds, 'funds');
  unique(registry.strategies, 'strategies');
  const policySlugs = new Set(registry.policies.map((p) => p.slug));
  registry.funds.forEach((fund, i) => {
    if (!policySlugs.has(fund.policy)) fail(`funds[${i}].policy`, `names no policy ("${fund.policy}")`);
  });
  return registry;
}

export function loadRegistry(file: string): Registry {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new RegistryError(`Cannot read registry ${file}: ${(cause as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    throw new RegistryError(`Registry ${file} is not JSON: ${(cause as Error).message}`);
  }
  return parseRegistry(json, file);
}

/** Lookup helpers built once: the gateway resolves slugs and addresses through them. */
export interface RegistryIndex {
  /** the registry file as parsed */
  document: Registry;
  fundBySlug: Map<string, RegistryFund>;
  fundByVault: Map<string, RegistryFund>;
  policyBySlug: Map<string, RegistryPolicy>;
  strategyBySlug: Map<string, RegistryStrategy>;
  /** lowercase address -> contract entry */
  contractByAddress: Map<string, RegistryContract>;
  contractOfKind(kind: ContractKind): RegistryContract | undefined;
  /** the policy a fund references (parseRegistry guarantees it exists) */
  policyOf(fund: RegistryFund): RegistryPolicy;
}

export function indexRegistry(registry: Registry): RegistryIndex {
  const policyBySlug = new Map(registry.policies.map((p) => [p.slug, p]));
  return {
    document: registry,
    fundBySlug: new Map(registry.funds.map((f) => [f.slug, f])),
    fundByVault: new Map(registry.funds.map((f) => [f.vault.toLowerCase(), f])),
    policyBySlug,
    strategyBySlug: new Map(registry.strategies.map((s) => [s.slug, s])),
    contractByAddress: new Map(registry.contracts.map((c) => [c.address.toLowerCase(), c])),
    contractOfKind: (kind) => registry.contracts.find((c) => c.kind === kind),
    policyOf: (fund) => policyBySlug.get(fund.policy) as RegistryPolicy,
  };
}
