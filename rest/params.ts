// Parameter checking driven by the route table: each value is parsed against its
// declared schema, and the first violation becomes a 400 that names the parameter and
// the rule. Unknown query parameters are refused too, so a typo never passes silently.
// A slug that breaks its rule names no fund or strategy: it is refused in the words of an unknown
// slug's, which name the slug meant, a 404 in a path and a 400 in a query filter.
import {
  emptyValueMessage,
  notListedMessage,
  unknownSlugMessage,
  type NamedEntry,
} from '../gateway/inputs.ts';
import { isRequired, type ParamSpec, type RouteSpec } from './routes.ts';

export type ParamValues = Record<string, string | number>;

type ParamCheck =
  | { ok: true; values: ParamValues }
  | { ok: false; parameter: string; detail: string; notFound?: boolean };

/** The registry's funds or strategies by slug, for the not-found detail of a slug param. */
export type RegisteredSlugs = (resource: 'fund' | 'strategy') => ReadonlyMap<string, NamedEntry>;

const patterns = new Map<string, RegExp>();
function pattern(source: string): RegExp {
  let compiled = patterns.get(source);
  if (!compiled) patterns.set(source, (compiled = new RegExp(source)));
  return compiled;
}

function checkOne(spec: ParamSpec, raw: string): { value: string | number } | { detail: string } {
  const schema = spec.schema;
  if (schema.type === 'integer') {
    // leading zeros do not count toward the 16 digits, as they change no value: 01 is 1, and so is
    // 00000000000000001
    const value = /^0*\d{1,16}$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isSafeInteger(value) || value < schema.minimum || value > schema.maximum) {
      return { detail: `Parameter '${spec.name}' must be ${spec.rule}; got '${raw}'.` };
    }
    return { value };
  }
  if ('enum' in schema) {
    if (schema.enum.includes(raw)) return { value: raw };
    return { detail: notListedMessage(`Parameter '${spec.name}'`, spec.rule, schema.enum, raw) };
  }
  if (
    (schema.maxLength !== undefined && raw.length > schema.maxLength) ||
    !pattern(schema.pattern).test(raw)
  ) {
    return { detail: `Parameter '${spec.name}' must be ${spec.rule}; got '${raw.slice(0, 80)}'.` };
  }
  return { value: raw };
}

export function checkParams(
  route: RouteSpec,
  pathParams: Record<string, string | undefined>,
  query: Record<string, unknown>,
  registered?: RegisteredSlugs,
): ParamCheck {
  const accepted = route.params.filter((p) => p.in === 'query').map((p) => p.name);
  for (const name of Object.keys(query)) {
    if (!accepted.includes(name)) {
      const list = accepted.length
        ? `accepted: ${accepted.join(', ')}`
        : 'this endpoint takes no query parameters';
      return { ok: false, parameter: name, detail: `Query parameter '${name}' is not accepted (${list}).` };
    }
  }
  const values: ParamValues = {};
  for (const spec of route.params) {
    const raw = spec.in === 'path' ? pathParams[spec.name] : query[spec.name];
    const required = isRequired(spec);
    // an empty optional value is a mistake, not an absence (emptyValueMessage)
    if (raw === '' && !required) {
      return {
        ok: false,
        parameter: spec.name,
        detail: emptyValueMessage(`Parameter '${spec.name}'`, spec.rule),
      };
    }
    if (raw === undefined || raw === '') {
      if (required) {
        return {
          ok: false,
          parameter: spec.name,
          detail: `Parameter '${spec.name}' is required: ${spec.rule}.`,
        };
      }
      if (spec.schema.type === 'integer' && spec.schema.default !== undefined)
        values[spec.name] = spec.schema.default;
      continue;
    }
    if (typeof raw !== 'string') {
      return { ok: false, parameter: spec.name, detail: `Parameter '${spec.name}' must be given once.` };
    }
    const checked = checkOne(spec, raw);
    if ('detail' in checked) {
      // a malformed slug names no fund or strategy: in a path that is a 404 (SPEC rule 3), in a
      // query filter a malformed parameter's 400 (rule 4)
      const resource = spec.names;
      if (resource) {
        const detail = unknownSlugMessage(resource, raw, registered?.(resource));
        return { ok: false, parameter: spec.name, detail, notFound: spec.in === 'path' };
      }
      return { ok: false, parameter: spec.name, detail: checked.detail };
    }
    values[spec.name] = checked.value;
  }
  return { ok: true, values };
}

/** A stable key of a request's meaning: route plus every parameter with defaults applied. */
export function cacheKey(route: RouteSpec, values: ParamValues): string {
  const parts = Object.keys(values)
    .sort()
    .map((k) => `${k}=${encodeURIComponent(String(values[k]))}`);
  return `${route.operationId}?${parts.join('&')}`;
}
