// Assembles the gateway schema: importing each type file registers it with the builder.
import { lexicographicSortSchema } from 'graphql';
import { builder } from './builder.ts';
import './types/query.ts';

export const schema = lexicographicSortSchema(builder.toSchema());
