// The indexing status source: graph-node's index-node status API (`indexingStatuses`, served at
// :8030/graphql by graph-node and at /graphql by the embedded indexer). The subgraph's own `_meta`
// counts deterministic errors only: an indexer halted by a failure it waits out (its RPC down, a
// full disk, a node behind) still answers its last block, and on a quiet chain nothing else shows
// it. The status API says `failed` and why, so health can. It is optional (a hosted graph-node's is
// usually private), and an answer it cannot give leaves health's verdict to the other signals.
import { ClientError, GraphQLClient } from 'graphql-request';
import { innermostMessage } from '../../common/error-causes.ts';
import { redactUrl, httpEndpoint, scrubUrls } from '../../common/url.ts';
import { graphNodeFetch } from './subgraph.ts';

interface IndexingStatusConfig {
  /** the status API's GraphQL URL */
  url: string;
  timeoutMs: number;
  /** told when the status API stops answering usefully and when it answers again, once each */
  log: (line: string) => void;
}

export type IndexingHealth = 'healthy' | 'unhealthy' | 'failed';

export interface IndexingFailure {
  /** the indexer's message, URLs in it cut to scheme://host[:port] */
  message: string;
  /** the block it failed at; null when no one block failed (an RPC outage, a node behind) */
  blockNumber: number | null;
  /** true: the same block fails again on every retry; false: the indexer retries it by itself */
  deterministic: boolean;
}

export interface IndexingStatus {
  health: IndexingHealth;
  fatalError: IndexingFailure | null;
  /** the network the deployment indexes (its first chain's), as the manifest names it; null if not said */
  network: string | null;
}

export interface IndexingStatusSource {
  /** What the status API says of `deployment`; null when it cannot say (unreachable, unknown there). */
  status(deployment: string): Promise<IndexingStatus | null>;
}

/** what is asked of the status API: the health of one deployment, by its id */
export const STATUS_QUERY = `query status($deployment: String!) {
  indexingStatuses(subgraphs: [$deployment]) {
    health
    fatalError { message deterministic block { number } }
    chains { network }
  }
}`;

export interface StatusAnswer {
  indexingStatuses?: {
    health?: unknown;
    fatalError?: { message?: unknown; deterministic?: unknown; block?: { number?: unknown } | null } | null;
    chains?: { network?: unknown }[] | null;
  }[];
}

/** graph-node's errors can run to a backtrace: health carries their start */
const MAX_MESSAGE_CHARS = 1000;

/** `message` fit for a public health record: no URL path, query or credentials, and not too long. */
function publicMessage(message: string): string {
  const scrubbed = scrubUrls(message);
  return scrubbed.length > MAX_MESSAGE_CHARS ? `${scrubbed.slice(0, MAX_MESSAGE_CHARS)}…` : scrubbed;
}

const HEALTHS = new Set<unknown>(['healthy', 'unhealthy', 'failed']);

/** The status in `answer`, or why it is none: it knows no such deployment, or it is of another shape. */
export function indexingStatusIn(answer: StatusAnswer, deployment: string): IndexingStatus | string {
  const statuses = answer.indexingStatuses;
  if (!Array.isArray(statuses)) return 'it answered without indexingStatuses: it is no index-node status API';
  const [status] = statuses;
  if (status === undefined) return `it does not know deployment ${deployment}, which SUBGRAPH_URL serves`;
  if (!HEALTHS.has(status.health)) return `it answered health ${JSON.stringify(status.health)}`;
  const network = status.chains?.[0]?.network;
  const known = {
    health: status.health as IndexingHealth,
    network: typeof network === 'string' ? network : null,
  };
  const error = status.fatalError;
  if (error === null || error === undefined) return { ...known, fatalError: null };
  const number = error.block?.number;
  return {
    ...known,
    fatalError: {
      message: publicMessage(String(error.message ?? '')),
      blockNumber: typeof number === 'string' || typeof number === 'number' ? Number(number) : null,
      deterministic: error.deterministic === true,
    },
  };
}

/** What failed, in a line fit for the log: the upstream's GraphQL errors, or the cause fetch gives (ECONNREFUSED …). */
function failureOf(error: unknown): string {
  if (error instanceof ClientError) {
    const messages = error.response.errors?.map((e) => e.message).join('; ');
    return messages ? `it answered the errors ${JSON.stringify(messages)}` : `HTTP ${error.response.status}`;
  }
  return publicMessage(innermostMessage(error));
}

export function createIndexingStatusSource(config: IndexingStatusConfig): IndexingStatusSource {
  const endpoint = httpEndpoint(config.url);
  const client = new GraphQLClient(endpoint.url, {
    headers: endpoint.headers,
    fetch: graphNodeFetch('indexing status API'),
  });
  const where = `SUBGRAPH_STATUS_URL (${redactUrl(config.url)})`;
  /** what the last failure was, so each outage is told once */
  let failing: string | null = null;
  const failed = (reason: string): null => {
    if (failing !== reason)
      config.log(
        `indexing status: ${where} cannot say: ${reason}; health's indexingHealth is null meanwhile`,
      );
    failing = reason;
    return null;
  };

  return {
    async status(deployment) {
      let answer: StatusAnswer;
      try {
        answer = await client.request<StatusAnswer>({
          document: STATUS_QUERY,
          variables: { deployment },
          signal: AbortSignal.timeout(config.timeoutMs),
        });
      } catch (error) {
        return failed(failureOf(error));
      }
      const status = indexingStatusIn(answer, deployment);
      if (typeof status === 'string') return failed(status);
      if (failing !== null) config.log(`indexing status: ${where} answers again`);
      failing = null;
      return status;
    },
  };
}
