// Reads every entity of the subgraph back through a graph-node-dialect GraphQL endpoint (the
// embedded indexer's, or any graph-node's), page by page, in the shape scenario-expectations.ts
// derives from the ledger.
import type { Row } from './scenario-expectations.ts';

const pageSize = 1000;

const selections = {
  funds: `id slug vault shareToken policy closed closedAt closedTxHash pausedModules registeredAtBlock registeredAt
    registeredTxHash latestNav { id } latestPublishedNav { id } latestSettlement { id }`,
  navRecords: `id fund { id } epoch status navPerShare totalAssets totalSupply draftedAt draftedTxHash
    submittedAt submittedTxHash verifiedAt verifiedTxHash verifier publishedAt publishedTxHash publishedBlock
    rejectionCount lastRejectedAt lastRejectedTxHash lastRejectionReason updatedAtBlock`,
  dividendRounds: `id fund { id } epoch merkleRoot total leafCount uri claimedCount claimedAmount
    postedAtBlock postedAt postedTxHash`,
  dividendClaims: `id round { id } fund { id } epoch account amount blockNumber timestamp txHash`,
  strategyAllocations: `id fund { id } strategy targetBps capBps active updatedAtBlock updatedAt`,
  allocationChanges: `id allocation { id } fund { id } strategy targetBps capBps active blockNumber timestamp txHash`,
  settlements: `id fund { id } epoch navPerShare assetsIn sharesMinted sharesBurned assetsOut totalAssets
    totalSupply reserveBalance blockNumber timestamp txHash`,
  requests: `id fund { id } kind account epoch amount settlement { id } blockNumber timestamp txHash`,
  pauseChanges: `id fund { id } module paused blockNumber timestamp txHash`,
  protocolEvents: `id contract eventName blockNumber timestamp txHash logIndex sortKey args fund`,
} as const;

export type Collection = keyof typeof selections;
export type SubgraphContents = Record<Collection, Row[]>;

/** POSTs one GraphQL request; rejects on HTTP or GraphQL errors. */
export async function queryGraphQL(url: string, query: string, variables: Row = {}): Promise<Row> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Row; errors?: { message: string }[] };
  if (!response.ok || body.errors?.length || body.data === undefined) {
    throw new Error(`GraphQL ${response.status}: ${JSON.stringify(body.errors ?? body)}`);
  }
  return body.data;
}

/** Every entity of one collection, ordered by id, paging with `id_gt`. */
export async function readCollection(url: string, collection: Collection): Promise<Row[]> {
  const rows: Row[] = [];
  let after: string | null = null;
  for (;;) {
    // A literal, not a variable: the id filter's type is ID or Bytes depending on the entity.
    const where = after === null ? '' : `, where: { id_gt: ${JSON.stringify(after)} }`;
    const query = `{
      page: ${collection}(first: ${pageSize}, orderBy: id, orderDirection: asc${where}) { ${selections[collection]} }
    }`;
    const page = (await queryGraphQL(url, query))['page'] as Row[];
    rows.push(...page);
    if (page.length < pageSize) return rows;
    after = String(page.at(-1)?.id);
  }
}

export async function readSubgraph(url: string): Promise<SubgraphContents> {
  const contents: Partial<SubgraphContents> = {};
  for (const collection of Object.keys(selections) as Collection[]) {
    contents[collection] = await readCollection(url, collection);
  }
  return contents as SubgraphContents;
}
