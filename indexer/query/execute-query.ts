// Executes one GraphQL request against the store as graph-node would answer it: parsed, validated
// against the generated schema, and run inside one read transaction of the store; resolvers are
// synchronous, so a request never interleaves with another. It runs on a query worker
// (query-worker.ts), never on the thread that indexes.
// Queries are bounded as graph-node bounds them, in depth (MAX_QUERY_DEPTH) and result size
// (INDEXER_QUERY_MAX_RESULT_BYTES), and in how deep their values nest (MAX_VALUE_DEPTH).
// A query that meets a damaged page of the store is answered with the store's name and the remedy,
// and the store's reader remembers the damage for the index-node status API (storeDamageMet).
import {
  GraphQLError,
  Kind,
  Lexer,
  Source,
  TokenKind,
  TypeInfo,
  execute,
  getNamedType,
  isEnumType,
  parse,
  specifiedRules,
  validate,
  visit,
  visitWithTypeInfo,
  type DocumentNode,
  type EnumValueNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { damagedStoreMessage, isStoreDamage } from '../store/sqlite-store.ts';
import { ResultSizeLimit, type QueryContext, type TopLevelRead } from './api-schema.ts';
import { logsQueryRefusal } from './logs-field.ts';
import { QueryError } from './sql-query.ts';
import { BlockLocationError, type LatestBlock, type StoreReader } from './store-reader.ts';

/** What a request executes against: a schema, and the root its query fields resolve from. */
export interface ExecutableApi {
  schema: GraphQLSchema;
  rootValue?: unknown;
  /** a subgraph's API: its answers follow graph-node's error policy (see asGraphNodeAnswer) */
  subgraphErrors?: boolean;
}

/** What a request reads: the store's reader, and the store's file, which a query finding it damaged names. */
interface StoreInUse {
  reader: StoreReader;
  /** left out, the answer names no file */
  storePath?: string;
}

/** A request's options: the API, the store it reads, and the result-size limit. */
type ExecuteOptions = ExecutableApi & StoreInUse & { maxResultBytes?: number };

export interface GraphQLRequest {
  query?: unknown;
  variables?: unknown;
  operationName?: unknown;
}

/** graph-node's GRAPH_GRAPHQL_MAX_DEPTH default (graph/src/env/graphql.rs): selection sets nested. */
const MAX_QUERY_DEPTH = 255;

/**
 * How deep lists and objects may nest in a value, inline or in a variable (a `where` nesting `or`s
 * takes two levels each). graph-node sets no limit of its own; without one, a deep enough value
 * overflows the stack of GraphQL's parser and coercion.
 */
const MAX_VALUE_DEPTH = 255;

/**
 * The result-size limit of INDEXER_QUERY_MAX_RESULT_BYTES (graph-node's GRAPH_GRAPHQL_ERROR_RESULT_SIZE,
 * unlimited there by default), in bytes of the entities a query reads (api-schema.ts entityWeight).
 * The gateway's largest queries (1,000 funds with their two NAV records, 1,000 events) weigh about
 * 3 MB at most; the limit stops a query asking for millions of entities early, before it has held
 * a query worker and hundreds of MB of memory for seconds.
 */
export const DEFAULT_MAX_RESULT_BYTES = 20_000_000;

/** graph-node's TooDeep message (graph/src/data/query/error.rs). */
const TOO_DEEP = `query has a depth that exceeds the limit of \`${MAX_QUERY_DEPTH}\``;

const valueTooDeep = (what: string): GraphQLError =>
  new GraphQLError(
    `${what} nests lists and objects deeper than the limit of \`${MAX_VALUE_DEPTH}\` levels; flatten nested \`and\`/\`or\` filters`,
  );

/** What a stack overflow (a RangeError) tells the client. */
const TOO_DEEPLY_NESTED = 'the query is too deeply nested';

/** What a query withholding its data for indexing errors still answers (graph-node's post_process). */
const KEPT_ON_DENY = new Set(['_meta', '__schema', '__type']);

/**
 * The top-level fields of an answer in graph-node's groups: consecutive fields with the same
 * `block` argument, which graph-node runs as one query each. Fields without a read noted
 * (`__typename`, introspection) take no `block`.
 */
function groupsOf(
  keys: readonly string[],
  reads: readonly TopLevelRead[],
  latest: LatestBlock,
): TopLevelRead[][] {
  const noted = new Map(reads.map((r) => [r.key, r]));
  const groups: TopLevelRead[][] = [];
  for (const key of keys) {
    const read = noted.get(key) ?? { key, constraint: 'latest', block: latest.number, allowsErrors: false };
    const last = groups.at(-1);
    if (last && last[0]!.constraint === read.constraint) last.push(read);
    else groups.push([read]);
  }
  return groups;
}

/**
 * A subgraph query's answer shaped as graph-node's: a block it cannot locate fails the whole query
 * with that error alone (resolver.rs locate_blocks); a group with errors answers no data; a group
 * reading a block at or after the first indexing error, unless it holds `_meta` alone, gets an
 * `indexing_error`, and, unless each of its fields says `subgraphError: allow` (`_meta`,
 * `__typename` and the introspection fields cannot), keeps only its `_meta` and introspection
 * fields (post_process). The answer has no `data` when nothing is left.
 */
function asGraphNodeAnswer(
  result: ExecutionResult,
  reads: readonly TopLevelRead[],
  latest: LatestBlock,
): ExecutionResult {
  const errors = result.errors ?? [];
  const unlocated = errors.find((e) => e.originalError instanceof BlockLocationError);
  if (unlocated) return { errors: [unlocated] };
  // errors without a path (variables) failed the whole query; where graphql-js has nulled the
  // whole data (an error in a non-null collection), the other groups' data went with it, which
  // graph-node, running each group apart, would have kept
  if (!result.data) return { errors };
  const first = latest.firstErrorBlock;
  const data: Record<string, unknown> = { ...result.data };
  const answerErrors: GraphQLError[] = [];
  for (const group of groupsOf(Object.keys(result.data), reads, latest)) {
    const groupErrors = errors.filter((e) => group.some((r) => r.key === e.path?.[0]));
    if (groupErrors.length > 0) {
      for (const r of group) delete data[r.key];
      answerErrors.push(...groupErrors);
      continue;
    }
    if (first === null || group[0]!.block < first || group.every((r) => r.key === '_meta')) continue;
    answerErrors.push(new GraphQLError('indexing_error'));
    if (group.some((r) => !r.allowsErrors))
      for (const r of group) if (!KEPT_ON_DENY.has(r.key)) delete data[r.key];
  }
  return {
    ...(Object.keys(data).length > 0 ? { data } : {}),
    ...(answerErrors.length > 0 ? { errors: answerErrors } : {}),
  };
}

/**
 * graph-node takes a string naming a value of the enum an argument expects as that value
 * (graph/src/data/value.rs coerce_enum: `status: "Draft"` is `status: Draft`), where GraphQL
 * validation refuses it; such strings are turned into enum values before validating. A string
 * naming no value of the enum is still refused.
 */
function enumStringsAsValues(schema: GraphQLSchema, document: DocumentNode): DocumentNode {
  const typeInfo = new TypeInfo(schema);
  return visit(
    document,
    visitWithTypeInfo(typeInfo, {
      StringValue(node): EnumValueNode | undefined {
        const type = getNamedType(typeInfo.getInputType());
        if (!isEnumType(type) || !type.getValue(node.value)) return undefined;
        return { kind: Kind.ENUM, value: node.value, loc: node.loc };
      },
    }),
  );
}

/**
 * The query's nesting, read from its tokens before it is parsed (GraphQL's parser recurses once
 * per level, and a deep enough query overflows its stack): selection sets, which graph-node limits
 * (its depth of a selection set nested n deep is n - 1), and lists and objects inside parentheses,
 * in argument, default and directive values. An error when either goes past its limit; null
 * otherwise, a syntax error included, which is left to the parser.
 */
function lexicalDepthError(query: string): GraphQLError | null {
  const lexer = new Lexer(new Source(query));
  const open: ('selection' | 'value' | 'parenthesis')[] = [];
  let selections = 0;
  let values = 0;
  let parentheses = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      const kind = token.kind;
      if (kind === TokenKind.PAREN_L) {
        open.push('parenthesis');
        parentheses++;
      } else if (kind === TokenKind.BRACE_L || kind === TokenKind.BRACKET_L) {
        if (parentheses > 0 || kind === TokenKind.BRACKET_L) {
          open.push('value');
          if (++values > MAX_VALUE_DEPTH) return valueTooDeep('the query has a value that');
        } else {
          open.push('selection');
          if (++selections > MAX_QUERY_DEPTH) return new GraphQLError(TOO_DEEP);
        }
      } else if (kind === TokenKind.PAREN_R || kind === TokenKind.BRACE_R || kind === TokenKind.BRACKET_R) {
        const closed = open.pop();
        if (closed === 'parenthesis') parentheses--;
        else if (closed === 'value') values--;
        else if (closed === 'selection') selections--;
        else return null;
      }
    }
  } catch {
    // a syntax error: the parser reports it
  }
  return null;
}

/**
 * graph-node's depth of the selection sets fragments put together (query.rs complexity_inner: a
 * fragment spread, like an inline fragment, is one level): TooDeep when some selection set is at
 * depth MAX_QUERY_DEPTH or more. The lexical check has measured each definition on its own already.
 * Undefined and cyclic fragments are left to validation.
 */
function fragmentDepthError(document: DocumentNode): GraphQLError | null {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  if (fragments.size === 0) return null;
  // a fragment walked without error at a depth is within the limit at any depth not greater
  const walkedAt = new Map<string, number>();
  const walking = new Set<string>();
  const withinLimit = (set: SelectionSetNode, depth: number): boolean => {
    if (depth >= MAX_QUERY_DEPTH) return false;
    for (const selection of set.selections) {
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || walking.has(name) || (walkedAt.get(name) ?? -1) >= depth + 1) continue;
        walking.add(name);
        const ok = withinLimit(fragment.selectionSet, depth + 1);
        walking.delete(name);
        if (!ok) return false;
        walkedAt.set(name, depth + 1);
      } else if (selection.selectionSet && !withinLimit(selection.selectionSet, depth + 1)) {
        return false;
      }
    }
    return true;
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION && !withinLimit(definition.selectionSet, 0)) {
      return new GraphQLError(TOO_DEEP);
    }
  }
  return null;
}

/** The first variable whose value nests lists and objects deeper than MAX_VALUE_DEPTH, as an error. */
function variableDepthError(variables: Record<string, unknown>): GraphQLError | null {
  for (const [name, value] of Object.entries(variables)) {
    // iteratively: the value may be deeper than the stack
    const pending: [unknown, number][] = [[value, 0]];
    for (let next = pending.pop(); next; next = pending.pop()) {
      const [item, depth] = next;
      if (item === null || typeof item !== 'object') continue;
      if (depth + 1 > MAX_VALUE_DEPTH) return valueTooDeep(`variable \`$${name}\``);
      for (const inner of Array.isArray(item) ? item : Object.values(item)) pending.push([inner, depth + 1]);
    }
  }
  return null;
}

/** Whether `error` is V8's stack overflow. */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/** What SQLite found of each reader's store when a query met damage there (message, code). */
const damageMet = new WeakMap<StoreReader, string>();

/**
 * What a query through `reader` found wrong with the store, once one met a damaged page: SQLite's
 * message and code. A damaged page stays damaged, so it is remembered for the reader's life.
 */
export function storeDamageMet(reader: StoreReader): string | null {
  return damageMet.get(reader) ?? null;
}

/**
 * An error that is no GraphQLError (a bug, a stack overflow, a damaged store) as one the client can
 * read: a stack overflow says the query is too deeply nested; a damaged store says so, naming it and
 * the remedy (logged the first time only); anything else is logged and answered without its details.
 */
function unexpectedError(error: unknown, store: StoreInUse): GraphQLError {
  if (isStackOverflow(error)) return new GraphQLError(TOO_DEEPLY_NESTED);
  if (isStoreDamage(error)) {
    const { message, code } = error as Error & { code: string };
    const problem = `${message}, ${code}`;
    const damage = damagedStoreMessage(store.storePath, problem);
    if (!damageMet.has(store.reader)) console.error(`indexer query failed: ${damage}`);
    damageMet.set(store.reader, problem);
    return new GraphQLError(damage);
  }
  console.error('indexer query failed:', error);
  return new GraphQLError('Internal error while resolving the query');
}

/** Executes one GraphQL request against the store; the result is what graph-node would send. */
export function executeQuery(options: ExecuteOptions, request: GraphQLRequest): ExecutionResult {
  try {
    return executeChecked(options, request);
  } catch (error) {
    return { errors: [unexpectedError(error, options)] };
  }
}

function executeChecked(options: ExecuteOptions, request: GraphQLRequest): ExecutionResult {
  if (typeof request.query !== 'string') return { errors: [new GraphQLError('The query is empty')] };
  const lexicalError = lexicalDepthError(request.query);
  if (lexicalError) return { errors: [lexicalError] };
  let document: DocumentNode;
  try {
    document = parse(request.query);
  } catch (e) {
    return { errors: [e instanceof GraphQLError ? e : unexpectedError(e, options)] };
  }
  const depthError = fragmentDepthError(document);
  if (depthError) return { errors: [depthError] };
  document = enumStringsAsValues(options.schema, document);
  const validationErrors = validate(options.schema, document, specifiedRules);
  if (validationErrors.length > 0) return { errors: validationErrors };
  const variables =
    request.variables && typeof request.variables === 'object'
      ? (request.variables as Record<string, unknown>)
      : {};
  const variablesError = variableDepthError(variables);
  if (variablesError) return { errors: [variablesError] };
  // clients that name no operation often send "": graph-node reads no operationName at all
  const operationName =
    typeof request.operationName === 'string' && request.operationName !== ''
      ? request.operationName
      : undefined;
  const logsRefusal = logsQueryRefusal(options.schema, document, variables, operationName);
  if (logsRefusal) return { errors: [logsRefusal] };
  let contextValue: QueryContext | null = null;
  const result = options.reader.read(() => {
    contextValue = {
      reader: options.reader,
      latest: options.reader.latest(),
      reads: [],
      resultSize: new ResultSizeLimit(options.maxResultBytes ?? DEFAULT_MAX_RESULT_BYTES),
    };
    return execute({
      schema: options.schema,
      rootValue: options.rootValue,
      document,
      contextValue,
      variableValues: variables,
      operationName,
    });
  });
  if (result instanceof Promise) throw new Error('query execution unexpectedly went asynchronous');
  const { reads, latest, resultSize } = contextValue!;
  // graph-node fails the whole query with ResultTooBig (prefetch.rs), whatever else it read
  if (resultSize.exceeded) return { errors: [new GraphQLError(resultSize.exceeded.message)] };
  const answer = result.errors
    ? { ...result, errors: result.errors.map((error) => hideInternalError(error, options)) }
    : result;
  return options.subgraphErrors ? asGraphNodeAnswer(answer, reads, latest) : answer;
}

/** graphql-js's words for a null where the schema promises a value: the data's fault, not a bug */
const NON_NULL_COMPLETION = /^Cannot return null for non-nullable field [^.]+\.(\w+)\.$/;

/**
 * An error the query did not cause is logged and answered without its details; graphql-js passes
 * some errors through that are no GraphQLError (a stack overflow while coercing variables). A null
 * where the schema promises a value (a reference to an entity that does not exist) is said as
 * graph-node says it (NonNullError), naming the field, at the field's path.
 */
function hideInternalError(error: GraphQLError, store: StoreInUse): GraphQLError {
  if (!(error instanceof GraphQLError)) return unexpectedError(error, store);
  const original = error.originalError;
  const nonNull = original && NON_NULL_COMPLETION.exec(original.message);
  if (nonNull)
    return new GraphQLError(`Null value resolved for non-null field \`${nonNull[1]}\``, {
      nodes: error.nodes,
      path: error.path,
    });
  if (!original || original instanceof QueryError || original instanceof GraphQLError) return error;
  const hidden = unexpectedError(original, store);
  return new GraphQLError(hidden.message, { nodes: error.nodes, path: error.path });
}
