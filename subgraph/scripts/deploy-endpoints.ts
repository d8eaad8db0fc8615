// Before a deploy to a self-hosted graph-node (and in its --dry-run), GRAPH_NODE_URL and
// GRAPH_IPFS_URL are asked whether they are what they should be: graph-cli's own words for a wrong
// one were "HTTP error creating the subgraph: ECONNREFUSED" or "…: 501", naming neither variable
// nor URL, above an oclif stack. These requests change nothing on either server.
import { innermostMessage } from '../../common/error-causes.ts';
import { redactUrl, httpEndpoint } from '../../common/url.ts';

export interface NodeEndpoints {
  /** graph-node's admin JSON-RPC URL (GRAPH_NODE_URL) */
  nodeUrl: string;
  /** the IPFS API graph-node reads (GRAPH_IPFS_URL) */
  ipfsUrl: string;
}

const TIMEOUT_MS = 10_000;

/** What `url` answers a POST of `body` with, or an error naming `variable`, the URL and the cause. */
async function post(variable: string, url: string, body: string): Promise<{ status: number; text: string }> {
  // credentials in the URL, which fetch refuses, go as Basic authorization
  const endpoint = httpEndpoint(url);
  try {
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers: { ...endpoint.headers, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    throw new Error(`${variable} (${redactUrl(url)}) cannot be reached: ${innermostMessage(error)}`);
  }
}

function jsonOf(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Refuses a GRAPH_NODE_URL that is no graph-node admin endpoint and a GRAPH_IPFS_URL that is no IPFS
 * API. The admin endpoint is asked for a method it does not have: any JSON-RPC answer (its "Method
 * not found") shows it speaks JSON-RPC; the IPFS API is asked for its version (/api/v0/version).
 */
export async function checkNodeEndpoints({ nodeUrl, ipfsUrl }: NodeEndpoints): Promise<void> {
  const node = await post(
    'GRAPH_NODE_URL',
    nodeUrl,
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'fund_protocol_probe', params: {} }),
  );
  const rpc = jsonOf(node.text) as { jsonrpc?: unknown } | undefined;
  if (rpc?.jsonrpc !== '2.0')
    throw new Error(
      `GRAPH_NODE_URL (${redactUrl(nodeUrl)}) answered HTTP ${node.status} without JSON-RPC: it is no graph-node admin endpoint (graph-node serves it on port 8020 by default)`,
    );

  const versionUrl = `${ipfsUrl.replace(/\/+$/, '').replace(/\/api\/v0$/, '')}/api/v0/version`;
  const ipfs = await post('GRAPH_IPFS_URL', versionUrl, '');
  const version = jsonOf(ipfs.text) as { Version?: unknown } | undefined;
  if (ipfs.status !== 200 || typeof version?.Version !== 'string')
    throw new Error(
      `GRAPH_IPFS_URL (${redactUrl(ipfsUrl)}) answered /api/v0/version with HTTP ${ipfs.status} and no IPFS version: it is no IPFS API (kubo serves it on port 5001 by default)`,
    );
}
