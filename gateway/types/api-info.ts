// Version of the API surface.
import { builder } from '../builder.ts';

export const ApiInfoRef = builder.objectRef<{ version: string }>('ApiInfo').implement({
  description: 'The API itself.',
  fields: (t) => ({
    version: t.exposeString('version', {
      description: 'API version (semver); its major is the /v1/ prefix of the REST paths',
    }),
  }),
});
