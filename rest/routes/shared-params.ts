// Parameters that routes of more than one group take, so that a slug, an address, a page size or
// a cursor is described and bounded the same way on every endpoint that accepts it.
import {
  ADDRESS_PATTERN,
  ADDRESS_RULE,
  CURSOR_PATTERN,
  PAGE_LIMIT,
  SLUG_PATTERN,
  SLUG_RULE,
} from '../../gateway/inputs.ts';
import type { DocumentExamples } from '../examples.ts';
import type { ParamSpec } from '../routes.ts';

export const slugParam = (what: 'fund' | 'strategy', examples: DocumentExamples): ParamSpec => ({
  name: 'slug',
  in: 'path',
  description: what === 'fund' ? 'fund slug, from GET /v1/funds' : 'strategy slug, from GET /v1/strategies',
  schema: { type: 'string', pattern: SLUG_PATTERN, maxLength: 64 },
  rule: SLUG_RULE,
  example: what === 'fund' ? examples.fund.slug : examples.strategy.slug,
  names: what,
});

/** a query parameter naming an account or contract, in any case */
export const addressParam = (name: string, description: string, example: string | undefined): ParamSpec => ({
  name,
  in: 'query',
  description,
  schema: { type: 'string', pattern: ADDRESS_PATTERN },
  rule: ADDRESS_RULE,
  example,
});

export const limitParam = (what: string): ParamSpec => ({
  name: 'limit',
  in: 'query',
  description: `${what} per page`,
  schema: {
    type: 'integer',
    minimum: PAGE_LIMIT.minimum,
    maximum: PAGE_LIMIT.maximum,
    default: PAGE_LIMIT.default,
  },
  rule: `an integer from ${PAGE_LIMIT.minimum} to ${PAGE_LIMIT.maximum}`,
  example: 10,
});

/**
 * `example`: a nextCursor as this endpoint returns it (each endpoint's cursors are its own);
 * `boundTo`: what a request sending the cursor repeats of the request that returned it, as the
 * endpoint refuses the cursor under another
 */
export const cursorParam = (example: string | undefined, boundTo = 'the same path'): ParamSpec => ({
  name: 'cursor',
  in: 'query',
  description: `opaque \`nextCursor\` of the previous page, passed back exactly as returned, with ${boundTo} as the request that returned it: a cursor continues only that listing, and under another it is refused with 400; omit for the first (newest) page`,
  schema: { type: 'string', pattern: CURSOR_PATTERN, maxLength: 64 },
  rule: 'a nextCursor value returned by this endpoint',
  example,
});
