// The chain the protocol is deployed on, as the registry describes it.
import { builder } from '../builder.ts';
import type { Registry } from '../sources/registry.ts';

export const ChainRef = builder.objectRef<Registry['chain']>('Chain').implement({
  description: 'The network the protocol runs on.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'EIP-155 chain id (31337 on the local devnet)' }),
    name: t.exposeString('name', { description: 'network name, for display' }),
    explorer: t.exposeString('explorer', {
      description:
        'block-explorer base URL; the explorer fields of this API are <explorer>/address/<address>',
    }),
    isTestnet: t.exposeBoolean('isTestnet', {
      description: 'true on a test network, whose tokens have no value',
    }),
  }),
});
