// A handler that never ends must fail its block like any deterministic handler error, as graph-node's
// gas limit fails it, rather than hold the indexing thread (and under npm start the whole service)
// for ever: the runtime meters each mapping module when it loads (execution-budget.ts). The endless
// loop runs in an indexer of its own process with the real budget; the rest use a small budget in
// this process, on recursion (which no loop counter would see) and on handlers that end.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BUDGET_EXPORT, meterExecution } from '../../../indexer/runtime/execution-budget.ts';
import { buildProbeSubgraph } from '../probe-build.ts';
import { startProbeChain, type ProbeChain } from '../probe-chain.ts';
import { indexingStatusOf, queryAnswer } from '../graphql-client.ts';
import { useProbeHarness } from './runtime-harness.ts';

const repoRoot = resolve(import.meta.dirname, '../../..');

describe('a handler that never ends, in an indexer', () => {
  let chain: ProbeChain;
  let child: ChildProcess;
  let queryUrl: string;
  let dataDir: string;

  beforeAll(async () => {
    buildProbeSubgraph();
    chain = await startProbeChain();
    dataDir = mkdtempSync(join(tmpdir(), 'endless-handler-'));
    const input = { rpcUrl: chain.anvil.rpcUrl, contracts: chain.contracts, dataDir };
    child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/indexer/runtime/endless-handler-indexer.ts', JSON.stringify(input)],
      { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    queryUrl = await new Promise<string>((resolveUrl, reject) => {
      createInterface({ input: child.stdout! }).on('line', (line) => {
        const m = /^query endpoint: (\S+)/.exec(line);
        if (m) resolveUrl(m[1]!);
      });
      child.once('exit', (code) => reject(new Error(`the indexer exited with ${code} before serving`)));
    });
  }, 240_000);

  afterAll(async () => {
    child?.kill('SIGKILL');
    await chain?.stop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('fails the subgraph at that block with a deterministic error saying the handler ran past its limit', async () => {
    await chain.probe(5, '1.5');
    const block = await chain.probe(44, 'spin');
    // the real budget runs out in tens of seconds; a regression never answers and fails here
    const status = await vi.waitFor(
      async () => {
        const s = await indexingStatusOf<{
          health: string;
          fatalError: {
            message: string;
            deterministic: boolean;
            block: { number: string };
            handler: string;
          } | null;
        }>(queryUrl, 'health fatalError { message deterministic block { number } handler }');
        if (s.fatalError === null) throw new Error('no fatal error yet');
        return s;
      },
      { timeout: 180_000, interval: 250 },
    );
    expect(status.health).toBe('failed');
    expect(status.fatalError).toMatchObject({
      deterministic: true,
      block: { number: String(block) },
      handler: 'handleProbe',
    });
    expect(status.fatalError!.message).toMatch(
      /^Handler handleProbe of data source ProbeEmitter failed at block \d+, transaction 0x[0-9a-f]{64}, log index 0: Gas limit exceeded: the handler ran past 10,000,000,000 loop iterations and function calls, .* it likely loops for ever/,
    );
    // the endpoint answers again, with what the blocks before it stored
    expect(
      await queryAnswer(queryUrl, '{ probeResults(where: { kind: 5 }, subgraphError: allow) { output } }'),
    ).toEqual({ data: { probeResults: [{ output: '1.5' }] }, errors: [{ message: 'indexing_error' }] });
  }, 240_000);
});

describe('the execution budget of a handler call', () => {
  const harness = useProbeHarness({ handlerBudget: 1_000_000n });

  it('fails a handler whose recursion, with no loop, makes more calls than the budget', () => {
    const error = harness().probeError(45, '24');
    expect(error.handler).toBe('handleProbe');
    expect(error.dataSource).toBe('ProbeEmitter');
    expect(error.message).toContain(
      'Gas limit exceeded: the handler ran past 1,000,000 loop iterations and function calls',
    );
  });

  it('lets a handler that spends less than the budget run to its end, also after one that spent it', () => {
    harness().probeError(45, '24');
    expect(harness().probe(45, '10')).toBe('branched 1024');
    expect(harness().probe(6, '2|3')).toBe('5');
  });

  it('gives each call the whole budget, not what the calls before it left', () => {
    // 2^17 calls each: four of them spend more than the budget together, none alone
    for (let i = 0; i < 4; i++) expect(harness().probe(45, '16')).toBe('branched 65536');
  });
});

describe('meterExecution', () => {
  /** A module importing an i32 global and a function that loops for ever, hand assembled. */
  // prettier-ignore
  const looping = Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type 0: [] -> []
    0x02, 0x08, 0x01, 0x01, 0x65, 0x01, 0x67, 0x03, 0x7f, 0x00, // import e.g: immutable i32
    0x03, 0x02, 0x01, 0x00, // function 0 of type 0
    0x07, 0x08, 0x01, 0x04, 0x73, 0x70, 0x69, 0x6e, 0x00, 0x00, // export "spin": function 0
    0x0a, 0x09, 0x01, 0x07, 0x00, 0x03, 0x40, 0x0c, 0x00, 0x0b, 0x0b, // loop br 0 end end
  ]);

  it('makes a module that loops for ever trap once its budget is spent, after the globals it imports', () => {
    const metered = new WebAssembly.Module(new Uint8Array(meterExecution(looping)));
    const g = new WebAssembly.Global({ value: 'i32', mutable: false }, 7);
    const { exports } = new WebAssembly.Instance(metered, { e: { g } });
    const budget = exports[BUDGET_EXPORT] as WebAssembly.Global;
    budget.value = 1000n;
    expect(() => (exports.spin as () => void)()).toThrow(WebAssembly.RuntimeError);
    // one unit for the function's entry, one per iteration, then the one that went below zero
    expect(budget.value).toBe(-1n);
    expect(g.value).toBe(7);
  });

  it('refuses a module using an instruction it does not know, naming it', () => {
    const simd = Uint8Array.from(looping);
    // the loop's `br 0` becomes the first bytes of a SIMD instruction
    simd.set([0xfd, 0x0c], simd.length - 4);
    expect(() => meterExecution(simd)).toThrow(
      'mapping module uses the wasm instruction 0xfd (in its function 0 of the code section), which the indexer cannot meter',
    );
  });
});
