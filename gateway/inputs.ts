// Argument rules shared by the GraphQL resolvers and the REST route table, so both surfaces
// accept exactly the same values and the same bounds are documented in openapi.json.
import { badInput } from './errors.ts';

export const NAV_HISTORY_LIMIT = { minimum: 1, maximum: 500, default: 90 } as const;
export const PAGE_LIMIT = { minimum: 1, maximum: 100, default: 20 } as const;
/** epochs and block numbers are GraphQL Int (32-bit signed) */
export const MAX_INT = 2_147_483_647;
export const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
export const EVENT_NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_]{0,63}$';
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]{1,64}$';

export function checkRange(argument: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw badInput(argument, `${argument} must be an integer from ${min} to ${max}.`);
  }
  return value;
}

/** Validates an address and returns it lowercase, the form the subgraph stores. */
export function checkAddress(argument: string, value: string): `0x${string}` {
  if (!new RegExp(ADDRESS_PATTERN).test(value)) {
    throw badInput(argument, `${argument} must be a 0x-prefixed 20-byte hex address (40 hex digits).`);
  }
  return value.toLowerCase() as `0x${string}`;
}

export function checkEventName(argument: string, value: string): string {
  if (!new RegExp(EVENT_NAME_PATTERN).test(value)) {
    throw badInput(argument, `${argument} must be a Solidity event name such as NavPublished.`);
  }
  return value;
}

/** Opaque cursors: base64url of "<kind>:<integer>", the sort key to continue below. */
export function encodeCursor(kind: 'd' | 'e', key: bigint | number): string {
  return Buffer.from(`${kind}:${key}`).toString('base64url');
}

/**
 * The sort key a cursor continues below. A key above `max` (the largest this endpoint's keys reach)
 * cannot be one it returned, and is bad input like any other forged cursor.
 */
export function decodeCursor(argument: string, kind: 'd' | 'e', cursor: string, max?: bigint): bigint {
  const decoded = new RegExp(CURSOR_PATTERN).test(cursor) ? Buffer.from(cursor, 'base64url').toString() : '';
  const match = /^([de]):(\d{1,30})$/.exec(decoded);
  const key = match && match[1] === kind ? BigInt(match[2] as string) : null;
  if (key === null || (max !== undefined && key > max)) {
    throw badInput(argument, `${argument} must be a nextCursor value returned by this endpoint.`);
  }
  return key;
}
