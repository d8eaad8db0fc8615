// `npm run bench:distributions`: what loading a large dividend distribution costs the service's
// event loop. In one run, the loop's delay (perf_hooks.monitorEventLoopDelay: max and p99) while the
// process idles, while the distribution source loads a 200,000-leaf file, checked on its verifier
// thread, and while the same check runs on the main thread, as it did before that thread; the
// load's wall time; the process's RSS before the load, at its peak (sampled every 50 ms) and once
// the tree is kept; and how long a proof takes from the kept tree. The file is made in a child
// process, so that making it leaves nothing in this one.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { StandardMerkleTree } from '@openzeppelin/merkle-tree';
import { verifyDistribution } from '../gateway/sources/distribution-verifier.ts';
import { createDistributionSource, type DistributionRound } from '../gateway/sources/distributions.ts';
import { ADDRESS_PATTERN } from '../gateway/inputs.ts';

const URI = 'distributions/bench/1.json';

/** Writes a distribution of `leaves` leaves (18-decimal amounts) under `dir` and its round beside it. */
function writeDistribution(dir: string, leaves: number): void {
  const values: [string, string][] = [];
  let total = 0n;
  for (let i = 0; i < leaves; i++) {
    const amount = 10n ** 18n + BigInt(i) * 7_919n;
    values.push([`0x${(i + 1).toString(16).padStart(40, '0')}`, amount.toString()]);
    total += amount;
  }
  const tree = StandardMerkleTree.of(values, ['address', 'uint256']);
  mkdirSync(join(dir, 'distributions', 'bench'), { recursive: true });
  writeFileSync(join(dir, URI), JSON.stringify(tree.dump()));
  const round: DistributionRound = {
    uri: URI,
    merkleRoot: tree.root,
    total: total.toString(),
    leafCount: leaves,
  };
  writeFileSync(join(dir, 'round.json'), JSON.stringify(round));
}

if (process.argv[2] === 'write') {
  writeDistribution(process.argv[3]!, Number(process.argv[4]));
  process.exit(0);
}

/** as many recipients as a 64 MiB distribution holds with room to spare (MAX_DISTRIBUTION_BYTES) */
const LEAVES = 200_000;
const IDLE_SECONDS = 10;

const ms = (nanoseconds: number) => (nanoseconds / 1e6).toFixed(1);
const mb = (bytes: number) => (bytes / 1e6).toFixed(0);

interface Figures {
  max: string;
  p99: string;
  seconds: string;
}

/** The event loop's delay over `work`, sampled every 10 ms (the default), and its wall time. */
async function measured(work: () => Promise<unknown>): Promise<Figures> {
  const delay = monitorEventLoopDelay();
  delay.enable();
  const started = performance.now();
  await work();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  delay.disable();
  return { max: ms(delay.max), p99: ms(delay.percentile(99)), seconds };
}

const dir = mkdtempSync(join(tmpdir(), 'bench-distributions-'));
try {
  console.log(`writing a distribution of ${LEAVES} leaves (in a child process)...`);
  execFileSync(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), 'write', dir, `${LEAVES}`],
    {
      stdio: 'inherit',
    },
  );
  const round = JSON.parse(readFileSync(join(dir, 'round.json'), 'utf8')) as DistributionRound;
  const fileBytes = readFileSync(join(dir, URI)).length;
  console.log(`file: ${mb(fileBytes)} MB`);

  const idle = await measured(() => sleep(IDLE_SECONDS * 1000));

  const source = createDistributionSource({ base: dir, timeoutMs: 60_000, cacheSize: 1 });
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 50);
  let distribution;
  const load = await measured(async () => (distribution = await source.load(round)));
  clearInterval(sampler);
  const rssKept = process.memoryUsage().rss;

  const lookups = 10_000;
  const lookupStarted = performance.now();
  for (let i = 0; i < lookups; i++) {
    distribution!.leafOf(`0x${((i % LEAVES) + 1).toString(16).padStart(40, '0')}`);
  }
  const proofMicroseconds = (((performance.now() - lookupStarted) * 1000) / lookups).toFixed(1);

  const file = readFileSync(join(dir, URI));
  const onMainThread = await measured(async () => {
    // yields once first, so that the delay the check causes is sampled
    await sleep(50);
    verifyDistribution({ file, round, addressPattern: ADDRESS_PATTERN });
    await sleep(50);
  });

  const row = (label: string, figures: Figures) =>
    `  ${label.padEnd(50)}${figures.max.padStart(9)}${figures.p99.padStart(9)}${figures.seconds.padStart(9)}`;
  console.log(
    [
      '',
      `${'event loop delay, ms (sampled every 10 ms)'.padEnd(52)}${'max'.padStart(9)}${'p99'.padStart(9)}${'wall s'.padStart(9)}`,
      row(`idle (${IDLE_SECONDS} s)`, idle),
      row(`loading ${LEAVES} leaves, checked on its thread`, load),
      row('the same check on the main thread, as before', onMainThread),
      '',
      `RSS: ${mb(rssBefore)} MB before the load, ${mb(rssPeak)} MB at its peak, ${mb(rssKept)} MB with the tree kept`,
      `a proof from the kept tree: ${proofMicroseconds} µs`,
    ].join('\n'),
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
