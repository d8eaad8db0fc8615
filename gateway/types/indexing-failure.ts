// Why the indexer halted, as its status API reports it: health carries it so a client sees a
// stopped index and its cause, not only a block number that stops moving.
import { builder } from '../builder.ts';
import type { IndexingFailure } from '../sources/indexing-status.ts';

export const IndexingFailureRef = builder.objectRef<IndexingFailure>('IndexingFailure').implement({
  description: "The error that halted indexing (the status API's fatalError).",
  fields: (t) => ({
    message: t.exposeString('message', {
      description:
        "the indexer's message; URLs in it are cut to scheme://host[:port], and it to 1,000 characters",
    }),
    blockNumber: t.exposeInt('blockNumber', {
      nullable: true,
      description:
        'the block whose handlers failed; null when no one block did (an RPC outage, a full disk, a node behind the indexed blocks)',
    }),
    deterministic: t.exposeBoolean('deterministic', {
      description:
        'true: the block fails the same way on every retry, so indexing stays halted until a new subgraph version fixes it; false: the indexer retries by itself and goes on once the cause is gone',
    }),
  }),
});
