// Web links of a fund.
import { builder } from '../builder.ts';
import type { RegistryFund } from '../sources/registry.ts';

export const FundLinksRef = builder.objectRef<RegistryFund['links']>('FundLinks').implement({
  description: 'Web pages of a fund.',
  fields: (t) => ({
    website: t.exposeString('website', { description: "URL of the fund's public web page" }),
    portal: t.exposeString('portal', { description: "URL of the fund's investor portal" }),
  }),
});
