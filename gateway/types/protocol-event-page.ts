// One page of the indexed event stream, newest first.
import { builder } from '../builder.ts';
import type { ListedEvent } from '../event-filters.ts';
import { ProtocolEventRef } from './protocol-event.ts';

interface ProtocolEventPageShape {
  items: ListedEvent[];
  nextCursor: string | null;
}

export const ProtocolEventPageRef = builder.objectRef<ProtocolEventPageShape>('ProtocolEventPage').implement({
  description: 'A page of indexed events ordered by (block, log index), newest first.',
  fields: (t) => ({
    items: t.field({
      type: [ProtocolEventRef],
      description: 'at most `limit` events, newest first; empty when none match',
      resolve: (p) => p.items,
    }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description: 'pass as `cursor`, with the same filters, for older events; null on the last page',
    }),
  }),
});
