// The JSON scalar: decoded event arguments are an object whose keys depend on the event.
import { builder } from '../builder.ts';
import { EVENT_ARGS_ENCODING } from '../event-names.ts';

export const JsonScalar = builder.scalarType('JSON', {
  description: `Any JSON value. ProtocolEvent.args is an object of an event's decoded arguments, ${EVENT_ARGS_ENCODING}.`,
  serialize: (value) => value,
  parseValue: (value) => value,
});
