// `npm run indexer`'s environment: INDEXER_TRANSACTIONS chooses what handlers get in
// event.transaction, INDEXER_GET_LOGS_MAX_ADDRESSES how many addresses one eth_getLogs names,
// IPFS_URL, ARWEAVE_URL and INDEXER_FILE_* where file data sources read files, INDEXER_HISTORY_BLOCKS
// and INDEXER_REORG_THRESHOLD how much history the store keeps, INDEXER_DISABLE_FAIL_FAST whether
// handler errors pause indexing before the first sync, and a value any of them does not take stops
// start-up with a message naming it.
import { describe, expect, it } from 'vitest';
import { indexerConfigFromEnv } from '../../indexer/config.ts';

const base = { RPC_URL: 'http://127.0.0.1:8545', NETWORK: 'sepolia' };

describe('the indexer configuration', () => {
  it('fetches whole transactions unless INDEXER_TRANSACTIONS says otherwise', () => {
    expect(indexerConfigFromEnv(base).transactions).toBe('full');
    expect(indexerConfigFromEnv({ ...base, INDEXER_TRANSACTIONS: 'hash-only' }).transactions).toBe(
      'hash-only',
    );
  });

  it('refuses an INDEXER_TRANSACTIONS it does not know, naming the values it takes', () => {
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_TRANSACTIONS: 'none' })).toThrow(
      'INDEXER_TRANSACTIONS must be full or hash-only, got "none"',
    );
  });

  it('keeps the history the manifest asks for unless INDEXER_HISTORY_BLOCKS says otherwise', () => {
    expect(indexerConfigFromEnv(base).historyBlocks).toBeUndefined();
    expect(indexerConfigFromEnv({ ...base, INDEXER_HISTORY_BLOCKS: '1000' }).historyBlocks).toBe(1000);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_HISTORY_BLOCKS: '0' })).toThrow(
      'INDEXER_HISTORY_BLOCKS must be an integer between 1 and 2147483647, got "0"',
    );
  });

  it("counts on reverting reorgs of 250 blocks, graph-node's threshold, unless INDEXER_REORG_THRESHOLD says otherwise", () => {
    expect(indexerConfigFromEnv(base).reorgThreshold).toBe(250);
    expect(indexerConfigFromEnv({ ...base, INDEXER_REORG_THRESHOLD: '64' }).reorgThreshold).toBe(64);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_REORG_THRESHOLD: '-1' })).toThrow(
      'INDEXER_REORG_THRESHOLD must be an integer between 0 and 1000000, got "-1"',
    );
  });

  it('pauses at handler errors before the first sync, as graph-node fails fast, unless INDEXER_DISABLE_FAIL_FAST is true', () => {
    expect(indexerConfigFromEnv(base).disableFailFast).toBe(false);
    expect(indexerConfigFromEnv({ ...base, INDEXER_DISABLE_FAIL_FAST: 'true' }).disableFailFast).toBe(true);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_DISABLE_FAIL_FAST: 'yes' })).toThrow(
      'INDEXER_DISABLE_FAIL_FAST must be true or false, got "yes"',
    );
  });

  it('names at most 2,000 addresses in one eth_getLogs unless INDEXER_GET_LOGS_MAX_ADDRESSES says otherwise', () => {
    expect(indexerConfigFromEnv(base).getLogsMaxAddresses).toBe(2_000);
    expect(indexerConfigFromEnv({ ...base, INDEXER_GET_LOGS_MAX_ADDRESSES: '500' }).getLogsMaxAddresses).toBe(
      500,
    );
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_GET_LOGS_MAX_ADDRESSES: '0' })).toThrow(
      'INDEXER_GET_LOGS_MAX_ADDRESSES must be an integer between 1 and 100000, got "0"',
    );
  });

  it('asks for template events from any address past 10,000 data sources unless INDEXER_STATIC_FILTERS_THRESHOLD says otherwise', () => {
    expect(indexerConfigFromEnv(base).staticFiltersThreshold).toBe(10_000);
    expect(
      indexerConfigFromEnv({ ...base, INDEXER_STATIC_FILTERS_THRESHOLD: '500' }).staticFiltersThreshold,
    ).toBe(500);
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_STATIC_FILTERS_THRESHOLD: '-1' })).toThrow(
      'INDEXER_STATIC_FILTERS_THRESHOLD must be an integer between 0 and 9007199254740991, got "-1"',
    );
  });

  it("reads files from no IPFS server unless IPFS_URL names one, from arweave.net, within graph-node's bounds by default", () => {
    expect(indexerConfigFromEnv(base).files).toEqual({
      ipfsUrl: undefined,
      arweaveUrl: 'https://arweave.net',
      timeoutMs: 60_000,
      maxFileBytes: 25 * 1024 * 1024,
      maxRetryMs: 600_000,
    });
    expect(indexerConfigFromEnv({ ...base, IPFS_URL: 'http://127.0.0.1:5001' }).files.ipfsUrl).toBe(
      'http://127.0.0.1:5001',
    );
  });

  it('refuses a file server URL that is not http(s) and a file bound out of range, naming the variable', () => {
    expect(() => indexerConfigFromEnv({ ...base, IPFS_URL: 'ipfs://bafy' })).toThrow(
      'IPFS_URL must be an http(s) URL (an IPFS gateway or kubo RPC API), got "ipfs://bafy"',
    );
    expect(() => indexerConfigFromEnv({ ...base, ARWEAVE_URL: 'ar://x' })).toThrow(
      'ARWEAVE_URL must be an http(s) URL (an Arweave gateway), got "ar://x"',
    );
    expect(() => indexerConfigFromEnv({ ...base, INDEXER_FILE_TIMEOUT_MS: '5' })).toThrow(
      'INDEXER_FILE_TIMEOUT_MS must be an integer between 100 and 3600000, got "5"',
    );
  });
});
