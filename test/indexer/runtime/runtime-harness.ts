// Shared setup of the runtime tests: loads the host-probe fixture subgraph (built by
// probe-build.ts), opens a real SQLite store for a schema, and runs blocks of synthetic logs
// through the block processor (probe(kind, input) runs one Probe event and returns what its
// handler stored).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeAbiParameters, encodeEventTopics, parseAbi, type Abi, type Hex, type Log } from 'viem';
import { afterAll, beforeAll } from 'vitest';
import {
  createBlockProcessor,
  type BlockProcessor,
  type BlockResult,
} from '../../../indexer/runtime/block-processor.ts';
import { DataSourceSet } from '../../../indexer/runtime/data-sources.ts';
import type { BlockWithLogs } from '../../../indexer/runtime/ethereum-event.ts';
import { HandlerError } from '../../../indexer/runtime/handler-error.ts';
import type { LogLevel } from '../../../indexer/runtime/host-context.ts';
import { loadSubgraph, type Subgraph } from '../../../indexer/runtime/manifest.ts';
import { MappingInstance } from '../../../indexer/runtime/mapping-instance.ts';
import { buildProbeSubgraph } from '../probe-build.ts';
import type { EntityStoreTx } from '../../../indexer/store/entity.ts';
import { openStore, type IndexerStore } from '../../../indexer/store/sqlite-store.ts';
import { parseSubgraphSchema, type SubgraphSchema } from '../../../indexer/subgraph-schema.ts';

/**
 * Runs the handlers of `block` in one go, as the follower does between its pauses (blockSteps):
 * how the tests run a block when the pauses do not matter to them.
 */
export function processBlock(
  processor: BlockProcessor,
  block: BlockWithLogs,
  tx: EntityStoreTx,
  sources: DataSourceSet,
): BlockResult {
  const steps = processor.blockSteps(block, tx, sources);
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * The built probe subgraph loaded with its manifest text changed by `edit`: how the tests of the
 * manifest's rules feed it what `graph build` would refuse or never write.
 */
export async function loadEditedProbe(edit: (text: string) => string): Promise<Subgraph> {
  const buildDir = buildProbeSubgraph();
  const manifest = readFileSync(join(buildDir, 'subgraph.yaml'), 'utf8');
  const path = join(buildDir, `edited-${process.pid}-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(path, edit(manifest));
  try {
    return await loadSubgraph({ buildDir, manifestPath: path });
  } finally {
    rmSync(path, { force: true });
  }
}

/**
 * A mapping instance of the probe subgraph's first data source, with no chain, block or data source:
 * for the tests that read and write values in a real module's memory.
 */
export async function probeMappingInstance(): Promise<MappingInstance> {
  const subgraph = await loadSubgraph({ buildDir: buildProbeSubgraph() });
  const mapping = subgraph.dataSources[0];
  if (!mapping) throw new Error('probe subgraph has no data source');
  const { module, memoryLimits } = mapping.mapping;
  return new MappingInstance(module, new WebAssembly.Memory({ initial: memoryLimits.initial }), {
    subgraph,
    schema: parseSubgraphSchema(readFileSync(subgraph.schemaFile, 'utf8')),
    logger: () => undefined,
    chain: null,
    block: null,
    dataSource: null,
  });
}

export interface LoggedLine {
  level: LogLevel;
  message: string;
  dataSource: string;
}

interface HarnessOptions {
  /** the units each handler call may spend (default the runtime's own, HANDLER_BUDGET) */
  handlerBudget?: bigint;
}

/** A loaded subgraph, its real SQLite store, and a processor whose mapping logs are collected. */
export class RuntimeHarness {
  readonly store: IndexerStore;
  readonly processor: BlockProcessor;
  readonly sources: DataSourceSet;
  readonly logged: LoggedLine[] = [];
  /** the number of the last block run, failed or not (0 before any) */
  lastBlock = 0;
  private readonly dir: string;
  private parent: Hex = `0x${'00'.repeat(32)}`;

  private constructor(
    readonly subgraph: Subgraph,
    readonly schema: SubgraphSchema,
    options: HarnessOptions,
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'runtime-store-'));
    this.store = openStore({
      path: join(this.dir, 'store.sqlite'),
      schema,
      startBlock: 0,
      deployment: 'runtime-test',
    });
    this.processor = createBlockProcessor(subgraph, schema, {
      logger: (level, message, dataSource) => this.logged.push({ level, message, dataSource }),
      handlerBudget: options.handlerBudget,
    });
    this.sources = new DataSourceSet(subgraph);
  }

  static async open(buildDir: string, options: HarnessOptions = {}): Promise<RuntimeHarness> {
    return RuntimeHarness.forSubgraph(await loadSubgraph({ buildDir }), options);
  }

  /** A harness running a subgraph already loaded (an edited probe manifest, say). */
  static forSubgraph(subgraph: Subgraph, options: HarnessOptions = {}): RuntimeHarness {
    return new RuntimeHarness(
      subgraph,
      parseSubgraphSchema(readFileSync(subgraph.schemaFile, 'utf8')),
      options,
    );
  }

  /** Processes one block and commits it; on a handler error the block is rolled back and the error rethrown. */
  runBlock(
    number: number,
    logs: Log[],
    extras: Pick<BlockWithLogs, 'transactions' | 'receipts' | 'header' | 'calls'> = {},
  ): BlockResult {
    this.lastBlock = number;
    const hash = blockHash(number);
    const block: BlockWithLogs = {
      number: BigInt(number),
      hash,
      parentHash: this.parent,
      timestamp: 1_700_000_000n + BigInt(number) * 12n,
      logs,
      ...extras,
    };
    this.store.begin();
    try {
      const tx = this.store.blockWriter(number);
      const result = processBlock(this.processor, block, tx, this.sources);
      tx.flush();
      this.store.commit({ number, hash, parentHash: this.parent, timestamp: Number(block.timestamp) }, null);
      this.parent = hash;
      return result;
    } catch (error) {
      this.store.rollback();
      throw error;
    }
  }

  /**
   * Runs one Probe(kind, input) event as the next block and returns the output its handler stored
   * in ProbeResult: how the tests call a host function through wasm.
   */
  probe(kind: number, input: string): string {
    const block = this.lastBlock + 1;
    this.runBlock(block, [
      makeLog(probeAbi, 'Probe', { kind, input }, { address: probeAddress, block, logIndex: 0 }),
    ]);
    const output = this.store.getCurrent('ProbeResult', `${txHash(block)}-0`)?.get('output');
    if (output?.kind !== 'String') throw new Error(`no ProbeResult output for block ${block}`);
    return output.value;
  }

  /** The HandlerError with which probe(kind, input) fails (an error if it does not). */
  probeError(kind: number, input: string): HandlerError {
    try {
      this.probe(kind, input);
    } catch (error) {
      if (error instanceof HandlerError) return error;
      throw error;
    }
    throw new Error(`probe ${kind}(${input}) did not fail`);
  }

  /**
   * Runs the probe's store script (kind 27; its commands are listed in probe.as) as one block and
   * returns what each of its load and get commands returned.
   */
  storeScript(...commands: string[]): string[] {
    return this.probe(27, commands.join(';')).split(';');
  }

  /** The message of the HandlerError with which a store script fails (an error if it does not). */
  storeScriptError(...commands: string[]): string {
    return this.probeError(27, commands.join(';')).message;
  }

  close(): void {
    this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * Opens a harness of the probe subgraph before the tests of the calling describe block and closes
 * it after them; returns what gets it inside those tests.
 */
export function useProbeHarness(options: HarnessOptions = {}): () => RuntimeHarness {
  let harness: RuntimeHarness | null = null;
  beforeAll(async () => {
    harness = await RuntimeHarness.open(buildProbeSubgraph(), options);
  }, 180_000);
  afterAll(() => {
    harness?.close();
  });
  return () => {
    if (!harness) throw new Error('the probe harness opens in beforeAll');
    return harness;
  };
}

export function blockHash(number: number): Hex {
  return `0x${number.toString(16).padStart(64, '0')}`;
}

export function txHash(n: number): Hex {
  return `0x${(0xabc00000 + n).toString(16).padStart(64, '0')}`;
}

/** A log of `eventName` from `address`, as eth_getLogs returns it. */
export function makeLog(
  abi: Abi,
  eventName: string,
  args: Record<string, unknown>,
  where: { address: Hex; block: number; logIndex: number; tx?: number },
): Log<bigint, number, false> {
  const event = abi.find((x) => x.type === 'event' && x.name === eventName);
  if (!event || event.type !== 'event') throw new Error(`no event ${eventName}`);
  const topics = encodeEventTopics({ abi: [event], eventName, args } as never) as Hex[];
  const dataInputs = event.inputs.filter((i) => !i.indexed);
  const data = encodeAbiParameters(
    dataInputs,
    dataInputs.map((i) => args[i.name ?? '']),
  );
  return {
    address: where.address,
    topics: topics as [Hex, ...Hex[]],
    data,
    blockNumber: BigInt(where.block),
    blockHash: blockHash(where.block),
    transactionHash: txHash(where.tx ?? where.block),
    transactionIndex: 0,
    logIndex: where.logIndex,
    removed: false,
  };
}

/** The host-probe fixture's events and the address its data source listens to. */
export const probeAbi = parseAbi([
  'event Probe(uint8 indexed kind, string input)',
  'event ProbeReceipt(uint8 tag)',
]);
export const probeAddress: Hex = '0x00000000000000000000000000000000000000aa';
/** the address of the ProbeCalls data source (call handlers, topic filters) in the built manifest */
export const probeCallsAddress: Hex = '0x00000000000000000000000000000000000000dd';
