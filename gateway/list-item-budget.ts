// A validation rule that refuses a document asking for more list items than one answer should
// carry. graphql-armor's cost limit counts the fields a document names, not how many items each
// list returns: 15 aliases of `funds { navHistory(limit: 500) {…} dividends(limit: 100) {…} }`
// passed every armor limit and answered 2 MB each, and a burst of them held the process for
// seconds and doubled its memory. This rule estimates the items before anything runs: each list
// counts its page size (its `limit` argument, else the argument's default in the schema) times
// the sizes of the lists it is nested in; a list without a `limit` counts as many items as the
// registry served lists of its type (funds, strategies, contracts, policies), a page's `items` as
// its page size, and any other list (a vault's strategies, paused modules, a Merkle path) as
// UNPAGED_LIST_ITEMS. Every alias and every fragment spread counts apart, even where the executor
// would merge two selections. Introspection answers from the fixed schema and is left to armor.
//
// Validation runs before variables are read, and Yoga keeps its verdict per document, so a
// `limit` given as a variable counts as the largest value the field accepts (LIMIT_MAXIMA).
import {
  getNamedType,
  getNullableType,
  GraphQLError,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLArgument,
  type GraphQLCompositeType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationRule,
} from 'graphql';
import { NAV_HISTORY_LIMIT, PAGE_LIMIT } from './inputs.ts';
import type { Registry } from './sources/registry.ts';

/**
 * The most list items one document may ask for: four times the largest route of the REST table
 * (a NAV history of 500 points), and 1/13 of the audited 15-alias document (27,045 items).
 */
export const MAX_LIST_ITEMS = 2000;

/** what a list the registry does not bound and no `limit` pages counts as */
export const UNPAGED_LIST_ITEMS = 32;

/**
 * The largest `limit` each field accepts (its resolver refuses more), by schema coordinate: what a
 * variable or an out-of-range literal counts as. A test checks every `limit` argument is listed.
 */
export const LIMIT_MAXIMA: Readonly<Record<string, number>> = {
  'Fund.navHistory': NAV_HISTORY_LIMIT.maximum,
  'Fund.dividends': PAGE_LIMIT.maximum,
  'Query.events': PAGE_LIMIT.maximum,
};
const LARGEST_LIMIT = Math.max(...Object.values(LIMIT_MAXIMA));

/** items asked for, by the schema coordinate of the list (a page's items under its paged field) */
type ItemCounts = Map<string, number>;

interface OperationEstimate {
  operation: OperationDefinitionNode;
  /** the operation's name; undefined for an anonymous one */
  name: string | undefined;
  total: number;
  byField: ItemCounts;
}

/** a page's size, for the list of items directly inside it, and the field it is counted under */
interface Page {
  size: number;
  coordinate: string;
}

/** how many items a list of each type counts as, from the registry served */
function registrySizes(registry: Registry): Record<string, number> {
  return {
    Fund: registry.funds.length,
    Strategy: registry.strategies.length,
    Contract: registry.contracts.length,
    Policy: registry.policies.length,
  };
}

function addTo(into: ItemCounts, from: ItemCounts, times: number): void {
  for (const [coordinate, items] of from) into.set(coordinate, (into.get(coordinate) ?? 0) + items * times);
}

const sum = (counts: ItemCounts) => [...counts.values()].reduce((a, b) => a + b, 0);

/**
 * Walks the selections once: a fragment's counts are computed once per page it sits in and
 * reused, so a fragment spread many times costs no more work than the document's length.
 */
class Estimator {
  private readonly fragmentCounts = new Map<string, ItemCounts>();
  private readonly inProgress = new Set<string>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragment: (name: string) => FragmentDefinitionNode | undefined,
    private readonly sizes: Record<string, number>,
  ) {}

  operation(operation: OperationDefinitionNode): OperationEstimate {
    const root = this.schema.getRootType(operation.operation);
    const byField = root ? this.selectionSet(root, operation.selectionSet, undefined) : new Map();
    return { operation, name: operation.name?.value, total: sum(byField), byField };
  }

  private selectionSet(
    type: GraphQLCompositeType,
    set: SelectionSetNode,
    page: Page | undefined,
  ): ItemCounts {
    const counts: ItemCounts = new Map();
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        addTo(counts, this.field(type, selection, page), 1);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : type;
        if (isCompositeType(on)) addTo(counts, this.selectionSet(on, selection.selectionSet, page), 1);
      } else {
        addTo(counts, this.spread(selection.name.value, page), 1);
      }
    }
    return counts;
  }

  private spread(name: string, page: Page | undefined): ItemCounts {
    const key = page ? `${name} ${page.coordinate} ${page.size}` : name;
    const known = this.fragmentCounts.get(key);
    if (known) return known;
    const fragment = this.fragment(name);
    const on = fragment && this.schema.getType(fragment.typeCondition.name.value);
    // an unknown or cyclic fragment asks for nothing here: graphql-js's own rules refuse it
    if (!fragment || !isCompositeType(on) || this.inProgress.has(name)) return new Map();
    this.inProgress.add(name);
    const counts = this.selectionSet(on, fragment.selectionSet, page);
    this.inProgress.delete(name);
    this.fragmentCounts.set(key, counts);
    return counts;
  }

  private field(parent: GraphQLCompositeType, node: FieldNode, page: Page | undefined): ItemCounts {
    const name = node.name.value;
    if (name.startsWith('__') || !(isObjectType(parent) || isInterfaceType(parent))) return new Map();
    const definition = parent.getFields()[name];
    if (!definition) return new Map(); // graphql-js refuses an unknown field
    const coordinate = `${parent.name}.${name}`;
    const isList = isListType(getNullableType(definition.type));
    const limitArgument = definition.args.find((argument) => argument.name === 'limit');
    const limit = limitArgument && limitOf(node, limitArgument, coordinate);
    const type = getNamedType(definition.type);
    const children =
      node.selectionSet && isCompositeType(type)
        ? this.selectionSet(
            type,
            node.selectionSet,
            limit !== undefined && !isList ? { size: limit, coordinate } : undefined,
          )
        : new Map<string, number>();
    if (!isList) return children;
    const [items, countedUnder] =
      limit !== undefined
        ? [limit, coordinate]
        : page
          ? [page.size, page.coordinate]
          : [this.sizes[type.name] ?? UNPAGED_LIST_ITEMS, coordinate];
    const counts: ItemCounts = new Map([[countedUnder, items]]);
    addTo(counts, children, items);
    return counts;
  }
}

/** The page size a `limit` argument asks for: its literal, its default, or its largest value. */
function limitOf(node: FieldNode, argument: GraphQLArgument, coordinate: string): number {
  const maximum = LIMIT_MAXIMA[coordinate] ?? LARGEST_LIMIT;
  const given = node.arguments?.find((a) => a.name.value === 'limit')?.value;
  if (!given || given.kind === Kind.NULL) {
    return typeof argument.defaultValue === 'number' ? argument.defaultValue : maximum;
  }
  if (given.kind === Kind.INT) return Math.min(Math.max(Number(given.value), 0), maximum);
  return maximum; // a variable, unknown until the request runs (or a literal graphql-js refuses)
}

/** The items each operation of a document asks for, as the rule counts them. */
export function estimateListItems(
  schema: GraphQLSchema,
  document: DocumentNode,
  registry: Registry,
): OperationEstimate[] {
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d]),
  );
  const estimator = new Estimator(schema, (name) => fragments.get(name), registrySizes(registry));
  return document.definitions
    .filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
    .map((operation) => estimator.operation(operation));
}

const count = (n: number) => n.toLocaleString('en-US');

/** The refusal: the estimate, the budget, where the items come from and how to ask for fewer. */
function overBudgetMessage(estimate: OperationEstimate, budget: number): string {
  const largest = [...estimate.byField]
    .sort(([, a], [, b]) => b - a)
    .slice(0, 3)
    .map(([coordinate, items]) => `${coordinate} ${count(items)}`)
    .join(', ');
  const query = estimate.name ? `The query ${estimate.name}` : 'This query';
  return (
    `${query} asks for up to ${count(estimate.total)} list items (${largest}), over the limit of ` +
    `${count(budget)} per query. Each list counts its limit argument (or its default; a variable counts ` +
    `as the largest limit allowed) times the lists it is nested in, and every alias counts apart. ` +
    `Ask for less: lower the limits, select fewer aliases or lists, or split the query into several smaller ones.`
  );
}

/**
 * The rule: refuses an operation asking for more than `budget` items. Its error is a bare GraphQL
 * error, as graphql-js's own validation errors and the armor limits are: /graphql's masking
 * (request-errors.ts, errors.ts) answers it as BAD_INPUT with HTTP 400. A GatewayError would not
 * do: Yoga marks each validation error in place as the GraphQL-over-HTTP spec's, and a taxonomy error
 * so marked would be answered with HTTP 200 to a client accepting application/json.
 */
export function listItemBudget(registry: Registry, budget: number = MAX_LIST_ITEMS): ValidationRule {
  // named: Yoga keys its cache of validation verdicts by the rules' names
  return function ListItemBudget(context) {
    return {
      Document(document) {
        for (const estimate of estimateListItems(context.getSchema(), document, registry)) {
          if (estimate.total > budget) {
            context.reportError(
              new GraphQLError(overBudgetMessage(estimate, budget), { nodes: estimate.operation }),
            );
          }
        }
        return false;
      },
    };
  };
}
