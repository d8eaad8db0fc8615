// startDevnet undoes what it made: stop() ends anvil and removes the temporary data dir, a step
// that fails does the same before its error is thrown (a test run or a start that fails must not
// leave anvils and directories behind), a data dir of the caller's is left where it is, and a devnet
// asked to automine mines what is sent to it once seeded.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileContracts } from '../../devnet/compile.ts';
import { createRpcClient } from '../../devnet/rpc.ts';
import { defaultScenarioParams, type ScenarioParams } from '../../devnet/scenario-params.ts';
import { DevnetDirError, startDevnet } from '../../devnet/start-devnet.ts';

/** A small scenario: under a second to seed, with dividend rounds that write distribution files. */
const small = (dataDir: string): ScenarioParams => ({
  ...defaultScenarioParams,
  epochs: 20,
  onboardingDays: 2,
  investorsPerFund: 4,
  requestsPerEpoch: 2,
  roundInterval: 8,
  claimBps: 5000,
  dataDir,
});

/** Prefix of this file's temporary data dirs, so that they can be told from other suites'. */
const prefix = `start-devnet-test-${process.pid}-`;
const ownTempDirs = (): string[] => readdirSync(tmpdir()).filter((name) => name.startsWith(prefix));

/** The pids of the anvil processes this process started and that still run. */
function runningAnvils(): number[] {
  const found = spawnSync('pgrep', ['-P', String(process.pid), '-x', 'anvil'], { encoding: 'utf8' });
  return found.stdout.split('\n').filter(Boolean).map(Number);
}

const scratch = mkdtempSync(join(tmpdir(), 'start-devnet-scratch-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('a seeded devnet', () => {
  it('ends its anvil and removes its temporary data dir when stopped', async () => {
    compileContracts();
    const devnet = await startDevnet({ tempDirPrefix: prefix, scenario: small });
    expect(runningAnvils()).toEqual([devnet.anvil.pid]);
    expect(ownTempDirs()).toEqual([basename(devnet.dataDir)]);
    expect(existsSync(join(devnet.dataDir, 'distributions'))).toBe(true);
    await devnet.stop();
    expect(runningAnvils()).toEqual([]);
    expect(ownTempDirs()).toEqual([]);
  });

  it("keeps a data dir of the caller's, with the files seeded into it, and makes it if missing", async () => {
    const dataDir = join(scratch, 'devnet');
    const devnet = await startDevnet({ anvil: { homeParent: dataDir }, dataDir, scenario: small });
    await devnet.stop();
    expect(runningAnvils()).toEqual([]);
    // anvil's home went with anvil; what the scenario wrote and the deployment stay
    expect(readdirSync(dataDir).sort()).toEqual(['deployment.json', 'distributions']);
    expect(JSON.parse(readFileSync(join(dataDir, 'deployment.json'), 'utf8'))).toMatchObject({
      rpcUrl: devnet.anvil.rpcUrl,
      chainId: 31337,
    });
  });
});

describe('a devnet that automines', () => {
  it('mines a transaction sent after the seeding at once, in a block of its own', async () => {
    compileContracts();
    const devnet = await startDevnet({ tempDirPrefix: prefix, scenario: small, automine: true });
    try {
      const rpc = createRpcClient(devnet.anvil.rpcUrl);
      const seeded = Number(await rpc.request('eth_blockNumber', []));
      const [from, to] = (await rpc.request('eth_accounts', [])) as string[];
      const hash = await rpc.request('eth_sendTransaction', [{ from, to, value: '0x1' }]);
      // anvil mines on a task of its own: the receipt may come a moment after the hash, as on any chain
      let receipt: { blockNumber: string } | null = null;
      for (let tries = 0; receipt === null && tries < 100; tries++) {
        receipt = (await rpc.request('eth_getTransactionReceipt', [hash])) as { blockNumber: string } | null;
        if (receipt === null) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(Number(receipt?.blockNumber)).toBe(seeded + 1);
      expect(Number(await rpc.request('eth_blockNumber', []))).toBe(seeded + 1);
    } finally {
      await devnet.stop();
    }
  });
});

describe("a caller's data dir", () => {
  it('is refused while a devnet runs from it, before an anvil starts, and taken once that devnet stopped', async () => {
    const dataDir = join(scratch, 'shared');
    const first = await startDevnet({ dataDir });
    try {
      const second = startDevnet({ dataDir });
      await expect(second).rejects.toThrow(DevnetDirError);
      await expect(second).rejects.toThrow(
        `${dataDir} is the data dir of a devnet that is running: its deployment.json names ${first.anvil.rpcUrl}, which answers. Stop that devnet (npm run devnet or npm start), or use another directory`,
      );
      expect(runningAnvils()).toEqual([first.anvil.pid]);
    } finally {
      await first.stop();
    }
    // its deployment.json now names a chain that is gone
    const third = await startDevnet({ dataDir });
    try {
      expect(JSON.parse(readFileSync(join(dataDir, 'deployment.json'), 'utf8')).rpcUrl).toBe(
        third.anvil.rpcUrl,
      );
    } finally {
      await third.stop();
    }
  });

  it('is refused, naming it, when it cannot be made, before an anvil starts', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, '');
    const started = startDevnet({ dataDir: join(file, 'devnet') });
    await expect(started).rejects.toThrow(DevnetDirError);
    await expect(started).rejects.toThrow(`cannot create ${join(file, 'devnet')}: ENOTDIR`);
    expect(runningAnvils()).toEqual([]);
  });
});

describe('a bring-up that fails', () => {
  it('leaves no anvil and no anvil home behind when the deployment fails', async () => {
    const homeParent = mkdtempSync(join(scratch, 'refused-deployment-'));
    // an automining chain mines each deployment transaction in a block of its own, where the
    // deployment expects them all in the one block it mines
    const started = startDevnet({
      anvil: { automine: true, homeParent },
      tempDirPrefix: prefix,
      scenario: small,
    });
    await expect(started).rejects.toThrow(/deploy MockUSDC: not mined in block/);
    expect(runningAnvils()).toEqual([]);
    expect(readdirSync(homeParent)).toEqual([]);
    expect(ownTempDirs()).toEqual([]);
  });

  it('leaves no anvil and no data dir behind when the scenario fails', async () => {
    let given: string | undefined;
    const started = startDevnet({
      tempDirPrefix: prefix,
      scenario: (dataDir) => {
        given = dataDir;
        // with no investors, the first request after the onboarding days has no one to pick
        return { ...small(dataDir), investorsPerFund: 0 };
      },
    });
    await expect(started).rejects.toThrow('pick from an empty list');
    expect(runningAnvils()).toEqual([]);
    expect(given && basename(given).startsWith(prefix)).toBe(true);
    expect(ownTempDirs()).toEqual([]);
  });
});
