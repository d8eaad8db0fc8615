// The flows of /.well-known/agents.json must run as written: a runner that follows agents.json's
// reference executor (wild-card-ai/agents-json, executor.py: a flow's inputs kept under the flow's
// id, each link copying the value at its origin's path to its target's, later links overriding
// earlier ones, the flow's answer built from the links that target the flow, else the last action's)
// runs each flow from its inputs alone against the REST service over the indexed devnet, calling the
// operations as openapi.json describes them.
import { describe, expect, it } from 'vitest';
import { agentsJson } from '../../rest/agents.ts';
import { DEVNET_EXAMPLES } from '../../rest/examples.ts';
import { buildOpenApi } from '../../rest/openapi.ts';
import { restServiceForSuite } from '../harness/stack.ts';

interface Link {
  origin: { actionId: string; fieldPath: string };
  target: { actionId: string; fieldPath: string };
}
interface Flow {
  id: string;
  actions: { id: string; operationId: string }[];
  links: Link[];
}
interface OpenApiOperation {
  operationId: string;
  parameters: { name: string; in: 'path' | 'query'; required: boolean }[];
}
type Values = Record<string, unknown>;

const service = restServiceForSuite();

/** the value at a dotted path, a number indexing an array, as the executor's keypaths read it */
const valueAt = (root: unknown, path: string): unknown =>
  path
    .split('.')
    .reduce<unknown>(
      (value, key) => (value !== null && typeof value === 'object' ? (value as Values)[key] : undefined),
      root,
    );

function setAt(root: Values, path: string, value: unknown): void {
  const keys = path.split('.');
  const last = keys.pop()!;
  let place = root;
  for (const key of keys) place = (place[key] ??= {}) as Values;
  place[last] = value;
}

/** The values `links` carry into a trace entry, the later links overriding the earlier. */
function linked(links: Link[], trace: Record<string, Values>): Values {
  const values: Values = {};
  for (const { origin, target } of links) {
    const value = valueAt(trace[origin.actionId], origin.fieldPath);
    if (value !== undefined && value !== null) setAt(values, target.fieldPath, value);
  }
  return values;
}

/** the GET path and operation of each operationId of the service's OpenAPI document */
function operations(): Map<string, { path: string; operation: OpenApiOperation }> {
  const doc = buildOpenApi(service.base, `${service.base}/problems`) as {
    paths: Record<string, { get?: OpenApiOperation }>;
  };
  return new Map(
    Object.entries(doc.paths).flatMap(([path, item]) =>
      item.get ? [[item.get.operationId, { path, operation: item.get }] as const] : [],
    ),
  );
}

/** Runs `flow` from its `inputs`; answers its result and the requests it sent. */
async function runFlow(flow: Flow, inputs: Values): Promise<{ result: unknown; requests: string[] }> {
  const byId = operations();
  const trace: Record<string, Values> = { [flow.id]: { parameters: inputs, responses: {} } };
  const requests: string[] = [];
  for (const action of flow.actions) {
    const { parameters = {} } = linked(
      flow.links.filter((l) => l.target.actionId === action.id),
      trace,
    ) as { parameters?: Values };
    const { path, operation } = byId.get(action.operationId)!;
    let url = path;
    const query = new URLSearchParams();
    for (const p of operation.parameters) {
      const value = parameters[p.name];
      if (value === undefined) {
        if (p.required) throw new Error(`action ${action.id} got no value for its parameter ${p.name}`);
        continue;
      }
      if (p.in === 'path') url = url.replace(`{${p.name}}`, encodeURIComponent(String(value)));
      else query.set(p.name, String(value));
    }
    if (query.size > 0) url += `?${query}`;
    requests.push(url);
    const response = await fetch(`${service.base}${url}`);
    trace[action.id] = { parameters, responses: { success: await response.json() } };
  }
  const answerLinks = flow.links.filter(
    (l) => l.target.actionId === flow.id && l.target.fieldPath.startsWith('responses.'),
  );
  const last = flow.actions[flow.actions.length - 1]!.id;
  const result = answerLinks.length > 0 ? linked(answerLinks, trace).responses : trace[last]!.responses;
  return { result, requests };
}

const flow = (id: string) => (agentsJson(service.base).flows as Flow[]).find((f) => f.id === id)!;
const get = async (path: string) => (await fetch(`${service.base}${path}`)).json() as Promise<Values>;

describe('the agents.json flows, run as the reference executor runs them', () => {
  const slug = DEVNET_EXAMPLES.fund.slug;
  const proof = DEVNET_EXAMPLES.scenario!.proof;

  it("answer the NAV lookup with the latest NAV and NAV history of the fund whose slug the flow's fund input names", async () => {
    const { result, requests } = await runFlow(flow('fund_nav_lookup'), { fund: slug });
    expect(requests).toEqual([`/v1/funds/${slug}/nav`, `/v1/funds/${slug}/nav/history`]);
    const latest = await get(`/v1/funds/${slug}/nav`);
    const history = await get(`/v1/funds/${slug}/nav/history`);
    expect(result).toEqual({ success: { fund: slug, nav: latest.nav, history: history.points } });
  });

  it("answer the claim proof of the flow's fund and address in the newest round when no epoch is given", async () => {
    const rounds = (await get(`/v1/funds/${slug}/dividends`)) as { items: { epoch: number }[] };
    const newest = rounds.items[0]!.epoch;
    const { result, requests } = await runFlow(flow('dividend_claim_proof'), {
      fund: slug,
      address: proof.account,
    });
    const proofPath = `/v1/funds/${slug}/dividends/${newest}/proof?address=${proof.account}`;
    expect(requests).toEqual([`/v1/funds/${slug}/dividends`, proofPath]);
    expect(result).toEqual({ success: await get(proofPath) });
  });

  it("answer the claim proof of the round the flow's epoch input names", async () => {
    const { result, requests } = await runFlow(flow('dividend_claim_proof'), {
      fund: slug,
      address: proof.account,
      epoch: proof.epoch,
    });
    const proofPath = `/v1/funds/${slug}/dividends/${proof.epoch}/proof?address=${proof.account}`;
    expect(requests[1]).toBe(proofPath);
    expect(result).toEqual({ success: { data: proof } });
  });
});
