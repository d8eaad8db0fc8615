// One page of a fund's dividend rounds, newest first.
import { builder } from '../builder.ts';
import { DividendRoundRef, type DividendRoundShape } from './dividend-round.ts';

interface DividendRoundPageShape {
  items: DividendRoundShape[];
  nextCursor: string | null;
}

export const DividendRoundPageRef = builder.objectRef<DividendRoundPageShape>('DividendRoundPage').implement({
  description: 'A page of dividend rounds, newest epoch first.',
  fields: (t) => ({
    items: t.field({
      type: [DividendRoundRef],
      description: 'at most `limit` rounds, newest epoch first; empty past the last round',
      resolve: (p) => p.items,
    }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description: 'pass as `cursor` for the next page; null on the last page',
    }),
  }),
});
