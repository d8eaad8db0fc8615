// The file data sources of a subgraph as the follower runs them (graph-node's offchain data
// sources): those handlers create are recorded with their block and given a causality region of
// their own; their files are fetched in the background (file-fetcher.ts); and at the end of each
// range the follower writes, the handlers of those whose file has arrived run in that range's last
// block, in creation order, each over a writer of its own region. The store is the truth: after a
// rollback or a reorg the files still awaited are read from it again.
import type { Hex } from 'viem';
import type { BlockProcessor } from '../runtime/block-processor.ts';
import type { FileTrigger } from '../runtime/file-handler.ts';
import type { CreatedFile } from '../runtime/host-context.ts';
import type { Entity } from '../store/entity.ts';
import { entityFromJson, entityToJson } from '../store/entity-json.ts';
import type { IndexerStore } from '../store/sqlite-store.ts';
import type { FileFetcher } from './file-fetcher.ts';

/** A context's JSON with its keys sorted, so that equal contexts compare equal as text. */
function contextJson(context: Entity | null): string | null {
  if (context === null) return null;
  return entityToJson(new Map([...context].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

export class FileDataSources {
  /** the file data sources whose file is awaited, by causality region (creation order) */
  private waiting = new Map<number, FileTrigger>();
  /** per fetcher, how many of those wait for each source: a file is dropped once none does */
  private waitingFor = new Map<FileFetcher, Map<string, number>>();
  private nextRegion = 1;

  constructor(
    private readonly store: IndexerStore,
    private readonly processor: BlockProcessor,
    /** the fetcher of each file template's files; one without any records its data sources, which wait */
    private readonly fetchers: ReadonlyMap<string, FileFetcher>,
    private readonly log: (line: string) => void,
  ) {
    this.reload();
  }

  /** How many file data sources wait for their file. */
  get pending(): number {
    return this.waiting.size;
  }

  /** Reads the awaited file data sources from the store again (after a rollback or a reorg). */
  reload(): void {
    const before = this.waitingFor;
    this.waiting = new Map();
    this.waitingFor = new Map();
    for (const r of this.store.awaitedFileDataSources()) {
      this.await({
        template: r.template,
        source: r.source,
        region: r.region,
        context: r.context === null ? null : entityFromJson(r.context),
        createdAtBlock: BigInt(r.createdAtBlock),
      });
    }
    this.nextRegion = this.store.nextFileRegion();
    for (const [fetcher, sources] of before) {
      for (const source of sources.keys())
        if (!this.waitingFor.get(fetcher)?.has(source)) fetcher.forget(source);
    }
  }

  /**
   * Records the file data sources created in block `block`, in the open store transaction; one equal
   * to an existing one (template, content path and context) is not created again, as in graph-node.
   */
  record(created: readonly CreatedFile[], block: number): void {
    for (const file of created) {
      const context = contextJson(file.context);
      if (this.store.hasFileDataSource(file.template, file.source, context)) {
        this.log(
          `file data source ${file.template} for ${file.source} exists already; the one created at block ${block} is ignored`,
        );
        continue;
      }
      const region = this.nextRegion++;
      this.store.recordFileDataSource({
        region,
        template: file.template,
        source: file.source,
        context,
        createdAtBlock: block,
      });
      this.await({
        template: file.template,
        source: file.source,
        region,
        context: file.context,
        createdAtBlock: BigInt(block),
      });
    }
  }

  /**
   * Runs, in the pass of block `header`, the handlers of the file data sources whose file has
   * arrived, in creation order, and records them done; those their handlers create wait for a later
   * pass. Throws HandlerError when a handler fails. Returns how many ran.
   */
  runArrived(header: { number: number; hash: string }): number {
    if (this.waiting.size === 0) return 0;
    const block = { number: BigInt(header.number), hash: header.hash as Hex };
    let ran = 0;
    for (const file of [...this.waiting.values()]) {
      const content = this.fetchers.get(file.template)?.content(file.source);
      if (!content) continue;
      const writer = this.store.fileWriter(header.number, file.region);
      const created = this.processor.runFileHandler(file, content, block, writer);
      writer.flush();
      this.store.markFileDataSourceDone(file.region, header.number);
      this.done(file);
      this.record(created, header.number);
      ran++;
    }
    return ran;
  }

  private await(file: FileTrigger): void {
    this.waiting.set(file.region, file);
    const fetcher = this.fetchers.get(file.template);
    if (!fetcher) return;
    let sources = this.waitingFor.get(fetcher);
    if (!sources) this.waitingFor.set(fetcher, (sources = new Map()));
    sources.set(file.source, (sources.get(file.source) ?? 0) + 1);
    fetcher.want(file.source);
  }

  private done(file: FileTrigger): void {
    this.waiting.delete(file.region);
    const fetcher = this.fetchers.get(file.template)!;
    const sources = this.waitingFor.get(fetcher)!;
    const left = sources.get(file.source)! - 1;
    if (left > 0) sources.set(file.source, left);
    else {
      sources.delete(file.source);
      fetcher.forget(file.source);
    }
  }
}
