// The Pothos schema builder shared by every type file. It defines no types itself: each
// GraphQL type lives in its own file under types/, registered when imported: schema.ts imports
// types/query.ts, whose fields import the types they return, and so on down.
import SchemaBuilder from '@pothos/core';
import type { GatewayContext } from './context.ts';

export const builder = new SchemaBuilder<{
  Context: GatewayContext;
  Scalars: { JSON: { Input: unknown; Output: unknown } };
  DefaultFieldNullability: false;
}>({
  // fields are non-null unless they say otherwise, so clients can rely on the schema
  defaultFieldNullability: false,
});
