// The JSON scalar: decoded event arguments are an object whose keys depend on the event.
import { builder } from '../builder.ts';

export const JsonScalar = builder.scalarType('JSON', {
  description: 'Any JSON value (decoded event arguments: integers as decimal strings, bytes as 0x hex).',
  serialize: (value) => value,
  parseValue: (value) => value,
});
