// The Pothos schema builder shared by every type file. It defines no types itself: each
// GraphQL type lives in its own file under types/, and schema.ts imports them all.
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
