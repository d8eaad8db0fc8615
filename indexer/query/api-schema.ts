// The GraphQL schema graph-node would generate for a subgraph (graph/src/schema/api.rs): per entity
// an object type and per interface an interface type, each with `<entity>(id, block, subgraphError)`
// and `<entities>(skip, first, orderBy, orderDirection, where, block, subgraphError)` query fields,
// `<Entity>_filter` and `<Entity>_orderBy` inputs, collection arguments on list fields, `_meta`, and
// `_logs` (logs-field.ts).
// An interface's entities are found in every implementer's table; `__typename` names the one each
// came from. Building a real schema means every argument or field we do not support fails GraphQL
// validation instead of being ignored.
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLInterfaceType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  type GraphQLArgumentConfig,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
  type GraphQLOutputType,
  type GraphQLResolveInfo,
  type GraphQLScalarType,
} from 'graphql';
import type { EntityTypeModel, FieldModel } from '../subgraph-schema.ts';
import { idFromSql, sqlToJson, type TableLayout } from '../store/layout.ts';
import { BigDecimalScalar, BigIntScalar, BytesScalar, Int8Scalar, TimestampScalar } from './scalars.ts';
import { queryableTypes, type QueryableType } from './filter-model.ts';
import { LOGS_FIELD, logsField } from './logs-field.ts';
import { queryFieldNames } from './inflector.ts';
import {
  checkOrderBy,
  compileByVids,
  compileCollection,
  compileInterfaceCollection,
  idAsText,
  QueryError,
  tablesOf,
  type CollectionArgs,
  type CollectionScope,
  type QueryModel,
} from './sql-query.ts';
import { idArgument, type BlockHeightArg, type LatestBlock, type StoreReader } from './store-reader.ts';

export interface QueryContext {
  reader: StoreReader;
  /** the checkpoint read at the start of the request's read transaction */
  latest: LatestBlock;
  /** the top-level fields resolved, in order: what graph-node's error policy applies to (see executeQuery) */
  reads: TopLevelRead[];
  /** what the entities read so far weigh, against the request's limit */
  resultSize: ResultSizeLimit;
}

/** What a value adds to a result's size: about as many bytes as its JSON in the answer. */
function valueWeight(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (value instanceof Uint8Array) return 2 * value.length + 4;
  if (value === null || value === undefined) return 4;
  // numbers and bigints (BigInt columns hold byte keys, weighed as bytes above)
  return 20;
}

/**
 * What an entity adds to a result's size: each field's name and value about as the answer's JSON
 * spells them, every column counted whether asked for or not (graph-node, similarly, weighs the
 * entities it fetched, in bytes of memory: graphql/src/store/prefetch.rs check_result_size).
 */
function entityWeight(row: Record<string, unknown>): number {
  let weight = 2;
  for (const key in row) {
    // the version columns (__vid, __from, __to) are not part of the answer
    if (key.startsWith('__')) continue;
    weight += key.length + 4 + valueWeight(row[key]);
  }
  return weight;
}

/**
 * graph-node's GRAPH_GRAPHQL_ERROR_RESULT_SIZE, checked as the result is built: every read of
 * entities adds their weight, and once the total passes the limit the read fails, as does every read
 * after it, so the query stops reading; the whole query is then answered with that error alone.
 */
export class ResultSizeLimit {
  private size = 0;
  /** the error the query fails with, once the limit is passed */
  exceeded: QueryError | null = null;

  constructor(readonly limit: number) {}

  /** Refuses any further read once the limit is passed. */
  check(): void {
    if (this.exceeded) throw this.exceeded;
  }

  /** Adds entities read; past the limit, the error the query fails with. */
  add(rows: readonly Record<string, unknown>[]): void {
    for (const row of rows) this.size += entityWeight(row);
    if (this.size <= this.limit) return;
    // graph-node's ResultTooBig message, then how to ask for less
    this.exceeded = new QueryError(
      `the result size of ${this.size} is larger than the allowed limit of ${this.limit}; ` +
        'ask for fewer entities: a smaller `first`, fewer nested collections or aliases, or a narrower `where`',
    );
    throw this.exceeded;
  }
}

/** A top-level field of a query: its response key, its `block` argument and the block it read. */
export interface TopLevelRead {
  key: string;
  /** the `block` argument as written (fields with equal ones form one group in graph-node) */
  constraint: string;
  block: number;
  /** `subgraphError: allow` */
  allowsErrors: boolean;
}

/** Notes a top-level field read (see QueryContext.reads). */
function noteRead(
  ctx: QueryContext,
  info: GraphQLResolveInfo,
  arg: BlockHeightArg | undefined,
  block: number,
  subgraphError: string | undefined,
): void {
  ctx.reads.push({
    key: info.path.key as string,
    constraint: arg ? JSON.stringify([arg.hash?.toString('hex'), arg.number, arg.number_gte]) : 'latest',
    block,
    allowsErrors: subgraphError === 'allow',
  });
}

/** What an entity object resolves from: one stored version, read at `block`. */
interface EntitySource {
  table: TableLayout;
  row: Record<string, unknown>;
  block: number;
}

const scalars: Record<string, GraphQLScalarType> = {
  ID: GraphQLID,
  String: GraphQLString,
  Int: GraphQLInt,
  Boolean: GraphQLBoolean,
  BigInt: BigIntScalar,
  BigDecimal: BigDecimalScalar,
  Bytes: BytesScalar,
  Int8: Int8Scalar,
  Timestamp: TimestampScalar,
};

/** The types every generated schema has, whatever its entities. */
function commonTypes() {
  return {
    orderDirection: new GraphQLEnumType({
      name: 'OrderDirection',
      description: 'Defines the order direction, either ascending or descending',
      values: { asc: { value: 'asc' }, desc: { value: 'desc' } },
    }),
    errorPolicy: new GraphQLEnumType({
      name: '_SubgraphErrorPolicy_',
      values: {
        allow: {
          value: 'allow',
          description: 'Data will be returned even if the subgraph has indexing errors',
        },
        deny: {
          value: 'deny',
          description: 'If the subgraph has indexing errors, data will be omitted. The default.',
        },
      },
    }),
    blockHeight: new GraphQLInputObjectType({
      name: 'Block_height',
      description: 'The block at which the query should be executed.',
      fields: { hash: { type: BytesScalar }, number: { type: GraphQLInt }, number_gte: { type: GraphQLInt } },
    }),
    blockChangedFilter: new GraphQLInputObjectType({
      name: 'BlockChangedFilter',
      fields: { number_gte: { type: new GraphQLNonNull(GraphQLInt) } },
    }),
  };
}

/** The entity with id `id` (its SQL value) in one of `tables`. */
function entityById(
  ctx: QueryContext,
  tables: readonly TableLayout[],
  id: unknown,
  block: number,
): EntitySource | null {
  ctx.resultSize.check();
  for (const table of tables) {
    const row = ctx.reader.byId(table, id, block);
    if (!row) continue;
    ctx.resultSize.add([row]);
    return { table, row, block };
  }
  return null;
}

/** The entities a collection of `typeName` (an entity type or interface, over its `tables`) selects, in order. */
function collection(
  model: QueryModel,
  ctx: QueryContext,
  typeName: string,
  tables: readonly TableLayout[],
  args: CollectionArgs,
  block: number,
  scope?: CollectionScope,
): EntitySource[] {
  checkOrderBy(model, typeName, args.orderBy);
  ctx.resultSize.check();
  const [table] = tables;
  if (table && tables.length === 1) {
    const rows = ctx.reader.all(compileCollection(model, table, args, block, scope));
    ctx.resultSize.add(rows);
    return rows.map((row) => ({ table, row, block }));
  }
  const picks = ctx.reader.all(compileInterfaceCollection(model, tables, args, block, scope));
  // each implementer's picked versions in one read (a version id is unique within its table only),
  // then put back in the collection's order
  const rows = tables.map((table, part) => {
    const vids = picks.filter((p) => Number(p.__part) === part).map((p) => p.__vid);
    const read = vids.length ? ctx.reader.all({ sql: compileByVids(table, vids.length), params: vids }) : [];
    ctx.resultSize.add(read);
    return new Map(read.map((row) => [row.__vid, row]));
  });
  return picks.map((p) => {
    const part = Number(p.__part);
    return { table: tables[part]!, row: rows[part]!.get(p.__vid)!, block };
  });
}

/** `_meta`: the block a query reads, the deployment, and whether indexing failed by then. */
function metaField(blockArg: GraphQLArgumentConfig): GraphQLFieldConfig<unknown, QueryContext> {
  const blockType = new GraphQLObjectType({
    name: '_Block_',
    fields: {
      hash: { type: BytesScalar, description: 'The hash of the block' },
      number: { type: new GraphQLNonNull(GraphQLInt), description: 'The block number' },
      timestamp: {
        type: GraphQLInt,
        description: 'Integer representation of the timestamp stored in blocks for the chain',
      },
      parentHash: { type: BytesScalar, description: 'The hash of the parent block' },
    },
  });
  const metaType = new GraphQLObjectType({
    name: '_Meta_',
    description: 'The type for the top-level _meta field',
    fields: {
      block: { type: new GraphQLNonNull(blockType) },
      deployment: { type: new GraphQLNonNull(GraphQLString), description: 'The deployment ID' },
      hasIndexingErrors: {
        type: new GraphQLNonNull(GraphQLBoolean),
        description: 'If `true`, the subgraph encountered indexing errors at some past block',
      },
    },
  });
  return {
    type: metaType,
    description: 'Access to subgraph metadata',
    args: { block: blockArg },
    resolve: (_src, args: { block?: BlockHeightArg }, ctx, info) => {
      const number = ctx.reader.resolveBlock(args.block, ctx.latest);
      noteRead(ctx, info, args.block, number, undefined);
      // graph-node looks a block given by number up by no hash, so it knows neither the hash nor what
      // is read by it, the timestamp and parent hash (resolver.rs lookup_meta)
      const header =
        typeof args.block?.number === 'number'
          ? null
          : number === ctx.latest.number
            ? ctx.latest.header
            : ctx.reader.storedBlock(number);
      return {
        block: {
          number,
          hash: header?.hash ?? null,
          timestamp: header?.timestamp ?? null,
          parentHash: header?.parentHash ?? null,
        },
        deployment: ctx.reader.deployment,
        hasIndexingErrors: ctx.latest.firstErrorBlock !== null && ctx.latest.firstErrorBlock <= number,
      };
    },
  };
}

/**
 * Builds one schema: the types are made in dependency order (enums; filter and orderBy inputs;
 * interfaces and objects, whose fields are thunks, so they may refer to each other), then the
 * query fields. A type's tables (one for an entity type, each implementer's for an interface) are
 * looked up here, once: resolvers run for every entity a response holds.
 */
class ApiSchemaBuilder {
  private readonly common = commonTypes();
  private readonly enums = new Map<string, GraphQLEnumType>();
  private readonly objectTypes = new Map<string, GraphQLObjectType>();
  private readonly interfaceTypes = new Map<string, GraphQLInterfaceType>();
  private readonly filterTypes = new Map<string, GraphQLInputObjectType>();
  private readonly orderByTypes = new Map<string, GraphQLEnumType>();
  private readonly queryable: QueryableType[];

  constructor(private readonly model: QueryModel) {
    this.queryable = queryableTypes(model.schema);
  }

  build(): GraphQLSchema {
    for (const [name, enumModel] of this.model.schema.enums) {
      const values = enumModel.values.map((v) => [
        v,
        { value: v, description: enumModel.valueDescriptions.get(v) },
      ]);
      this.enums.set(
        name,
        new GraphQLEnumType({ name, description: enumModel.description, values: Object.fromEntries(values) }),
      );
    }
    for (const entity of this.queryable) this.addFilterAndOrderBy(entity);
    this.addEntityTypes();
    return new GraphQLSchema({
      query: new GraphQLObjectType({ name: 'Query', fields: this.queryFields() }),
    });
  }

  private namedInput(name: string): GraphQLInputType {
    const t = scalars[name] ?? this.enums.get(name) ?? this.filterTypes.get(name.replace(/_filter$/, ''));
    if (!t) throw new Error(`no input type ${name}`);
    return t;
  }

  /** `<Entity>_filter` and `<Entity>_orderBy`. */
  private addFilterAndOrderBy(entity: QueryableType): void {
    const entries = this.model.filters.get(entity.name)!;
    const filterType: GraphQLInputObjectType = new GraphQLInputObjectType({
      name: `${entity.name}_filter`,
      fields: (): GraphQLInputFieldConfigMap => {
        const fields: GraphQLInputFieldConfigMap = {};
        for (const e of entries.values()) {
          const base = this.namedInput(e.typeName);
          fields[e.key] = { type: e.listValue ? new GraphQLList(new GraphQLNonNull(base)) : base };
        }
        fields._change_block = {
          type: this.common.blockChangedFilter,
          description: 'Filter for the block changed event.',
        };
        fields.and = { type: new GraphQLList(filterType) };
        fields.or = { type: new GraphQLList(filterType) };
        return fields;
      },
    });
    this.filterTypes.set(entity.name, filterType);
    this.orderByTypes.set(
      entity.name,
      new GraphQLEnumType({
        name: `${entity.name}_orderBy`,
        values: Object.fromEntries(
          [...this.model.orderBy.get(entity.name)!.keys()].map((k) => [k, { value: k }]),
        ),
      }),
    );
  }

  private collectionArgs(typeName: string): GraphQLFieldConfigArgumentMap {
    return {
      skip: { type: GraphQLInt, defaultValue: 0 },
      first: { type: GraphQLInt, defaultValue: 100 },
      orderBy: { type: this.orderByTypes.get(typeName)! },
      orderDirection: { type: this.common.orderDirection },
      where: { type: this.filterTypes.get(typeName)! },
    };
  }

  private outputType(field: FieldModel): GraphQLOutputType {
    let type: GraphQLOutputType;
    if (field.kind === 'Entity')
      type = this.objectTypes.get(field.typeName) ?? this.interfaceTypes.get(field.typeName)!;
    else if (field.kind === 'Enum') type = this.enums.get(field.typeName)!;
    else type = scalars[field.typeName]!;
    if (field.list) type = new GraphQLList(field.itemNonNull ? new GraphQLNonNull(type) : type);
    if (field.nonNull) type = new GraphQLNonNull(type);
    return type;
  }

  /** A list of entities takes collection arguments, on an interface's field too (graph-node's api.rs). */
  private fieldArgs(field: FieldModel): GraphQLFieldConfigArgumentMap | undefined {
    return field.kind === 'Entity' && field.list ? this.collectionArgs(field.typeName) : undefined;
  }

  private addEntityTypes(): void {
    for (const intf of this.model.schema.interfaces.values()) {
      this.interfaceTypes.set(
        intf.name,
        new GraphQLInterfaceType({
          name: intf.name,
          description: intf.description,
          fields: () =>
            Object.fromEntries(
              [...intf.fields.values()].map((f) => [
                f.name,
                { type: this.outputType(f), args: this.fieldArgs(f), description: f.description },
              ]),
            ),
          resolveType: (src: EntitySource) => src.table.entity.name,
        }),
      );
    }
    for (const entity of this.model.schema.entities.values()) {
      this.objectTypes.set(
        entity.name,
        new GraphQLObjectType<EntitySource, QueryContext>({
          name: entity.name,
          description: entity.description,
          interfaces: () => entity.interfaces.map((name) => this.interfaceTypes.get(name)!),
          fields: () =>
            Object.fromEntries(
              [...entity.fields.values()].map((f) => [
                f.name,
                { ...this.fieldConfig(entity, f), description: f.description },
              ]),
            ),
        }),
      );
    }
  }

  private fieldConfig(
    entity: EntityTypeModel,
    field: FieldModel,
  ): GraphQLFieldConfig<EntitySource, QueryContext> {
    const table = this.model.layouts.get(entity.name)!;
    if (field.kind !== 'Entity') {
      const column = table.byField.get(field.name)!;
      return { type: this.outputType(field), resolve: (src) => sqlToJson(column, src.row[field.name]) };
    }
    return field.derivedFrom === undefined
      ? this.referenceField(field)
      : this.derivedField(entity, table, field, field.derivedFrom);
  }

  /** A field holding the ids of the entities it refers to. */
  private referenceField(field: FieldModel): GraphQLFieldConfig<EntitySource, QueryContext> {
    const { model } = this;
    const type = this.outputType(field);
    const targets = tablesOf(model, field.typeName);
    if (!field.list) {
      return {
        type,
        resolve: (src, _args, ctx) => {
          const id = src.row[field.name];
          if (id === null || id === undefined) return null;
          return entityById(ctx, targets, id, src.block);
        },
      };
    }
    return {
      type,
      args: this.fieldArgs(field),
      resolve: (src, args: CollectionArgs, ctx) => {
        const raw = src.row[field.name];
        if (raw === null || raw === undefined) return null;
        const scope: CollectionScope = (alias, target) => ({
          sql: `${idAsText(`${alias}."id"`, target.idKind)} IN (SELECT value FROM json_each(?))`,
          params: [raw],
        });
        return collection(model, ctx, field.typeName, targets, args, src.block, scope);
      },
    };
  }

  /** A `@derivedFrom(field: back)` field: the entities whose `back` refers to this one. */
  private derivedField(
    entity: EntityTypeModel,
    table: TableLayout,
    field: FieldModel,
    back: string,
  ): GraphQLFieldConfig<EntitySource, QueryContext> {
    const { model } = this;
    const type = this.outputType(field);
    const targets = tablesOf(model, field.typeName);
    for (const target of targets) {
      if (!target.byField.has(back))
        throw new Error(`${entity.name}.${field.name}: ${target.entity.name} has no field ${back}`);
    }
    const scope =
      (src: EntitySource): CollectionScope =>
      (alias, target) => {
        const column = target.byField.get(back)!;
        return column.list
          ? {
              sql: `? IN (SELECT value FROM json_each(${alias}.${column.sql}))`,
              params: [idFromSql(table.idKind, src.row.id)],
            }
          : { sql: `${alias}.${column.sql} = ?`, params: [src.row.id] };
      };
    if (!field.list) {
      return {
        type,
        resolve: (src, _args, ctx) => {
          const [match, another] = collection(
            model,
            ctx,
            field.typeName,
            targets,
            { first: 2 },
            src.block,
            scope(src),
          );
          // graph-node reads every entity referring back and refuses more than one (resolver.rs resolve_object)
          if (another) {
            throw new QueryError(
              `Ambiguous result for derived field \`${field.name}\`: Multiple \`${field.typeName}\` entities refer back via \`${back}\``,
            );
          }
          return match ?? null;
        },
      };
    }
    return {
      type,
      args: this.fieldArgs(field),
      resolve: (src, args: CollectionArgs, ctx) =>
        collection(model, ctx, field.typeName, targets, args, src.block, scope(src)),
    };
  }

  /** `<entity>(id, block, subgraphError)` and `<entities>(...)` for each queryable type, `_meta` and `_logs`. */
  private queryFields(): Record<string, GraphQLFieldConfig<unknown, QueryContext>> {
    const { model } = this;
    const blockArg = {
      type: this.common.blockHeight,
      description:
        'The block at which the query should be executed. Can either be a `{ hash: Bytes }` value containing a block hash, a `{ number: Int }` containing the block number, or a `{ number_gte: Int }` containing the minimum block number. In the case of `number_gte`, the query will be executed on the latest block only if the subgraph has progressed to or past the minimum block number. Defaults to the latest block when omitted.',
    };
    const subgraphErrorArg = {
      type: new GraphQLNonNull(this.common.errorPolicy),
      defaultValue: 'deny',
      description:
        'Set to `allow` to receive data even if the subgraph has skipped over errors while syncing.',
    };
    const fields: Record<string, GraphQLFieldConfig<unknown, QueryContext>> = {};
    for (const entity of this.queryable) {
      const type = this.objectTypes.get(entity.name) ?? this.interfaceTypes.get(entity.name)!;
      const tables = tablesOf(model, entity.name);
      const { singular, plural } = queryFieldNames(entity.name);
      fields[singular] = {
        type,
        args: {
          id: { type: new GraphQLNonNull(GraphQLID) },
          block: blockArg,
          subgraphError: subgraphErrorArg,
        },
        resolve: (_src, args: { id: string; block?: BlockHeightArg; subgraphError: string }, ctx, info) => {
          const block = ctx.reader.resolveBlock(args.block, ctx.latest);
          noteRead(ctx, info, args.block, block, args.subgraphError);
          const [table] = tables;
          return table ? entityById(ctx, tables, idArgument(table, args.id), block) : null;
        },
      };
      fields[plural] = {
        type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(type))),
        args: { ...this.collectionArgs(entity.name), block: blockArg, subgraphError: subgraphErrorArg },
        resolve: (
          _src,
          args: CollectionArgs & { block?: BlockHeightArg; subgraphError: string },
          ctx,
          info,
        ) => {
          const block = ctx.reader.resolveBlock(args.block, ctx.latest);
          noteRead(ctx, info, args.block, block, args.subgraphError);
          return collection(model, ctx, entity.name, tables, args, block);
        },
      };
    }
    fields._meta = metaField(blockArg);
    fields[LOGS_FIELD] = logsField(this.common.orderDirection);
    return fields;
  }
}

export function buildApiSchema(model: QueryModel): GraphQLSchema {
  return new ApiSchemaBuilder(model).build();
}
