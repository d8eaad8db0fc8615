// Assembles the gateway schema: importing the root type registers it, and through its imports every
// type reachable from it, with the builder.
import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import './types/query.ts';

export const schema = lexicographicSortSchema(builder.toSchema());
