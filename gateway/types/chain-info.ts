// The chain the protocol is deployed on, as the registry describes it.
import { builder } from '../builder.ts';
import type { Registry } from '../sources/registry.ts';

export const ChainInfoRef = builder.objectRef<Registry['chain']>('Chain').implement({
  description: 'The network the protocol runs on.',
  fields: (t) => ({
    id: t.exposeInt('id', { description: 'numeric chain id' }),
    name: t.exposeString('name'),
    explorer: t.exposeString('explorer', { description: 'block explorer base URL' }),
    isTestnet: t.exposeBoolean('isTestnet'),
  }),
});
