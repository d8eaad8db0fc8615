// What the policies' parameter types (FixedPlusFloatParams, FractionalKellyParams) share: each is
// an object of integer parameters read from the policy contract, built from a table of words (the
// type's description, then each parameter's in order) that rest/schemas.ts builds the REST schema
// from too. Each type's file holds only its table.
import { builder } from '../builder.ts';

/** A policy's parameters in words: its type's description, and each parameter's, in order. */
export interface PolicyParamsTable {
  description: string;
  fields: Record<string, string>;
}

/** The values of a policy's parameters, tagged with its kind, which PolicyParams resolves by. */
export type PolicyParamsShape<Kind extends string, Table extends PolicyParamsTable> = { kind: Kind } & Record<
  keyof Table['fields'],
  number
>;

/** The GraphQL object type `name`: an Int field for each parameter of `table`, in its order. */
export function policyParamsObject<Kind extends string, Table extends PolicyParamsTable>(
  name: string,
  table: Table,
) {
  return builder.objectRef<PolicyParamsShape<Kind, Table>>(name).implement({
    description: table.description,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(table.fields).map(([field, description]) => [
          field,
          t.int({ description, resolve: (params) => params[field as keyof Table['fields']] }),
        ]),
      ),
  });
}
