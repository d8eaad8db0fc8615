// How the chain source's requests reach the node: the fetch viem's HTTP transport calls. viem sends
// every request as a JSON-RPC batch (an array, even for one call) and reads a failed answer's
// error only from an object body. A non-2xx answer whose body is a batch answer (an array) has its
// first error handed to viem as the body's error, so that the node's words (a span limit a proxy
// sends with HTTP 413) reach the refusal parser instead of the status text alone.

/** A JSON-RPC answer as a node sends it. */
interface RpcAnswer {
  id?: unknown;
  error?: unknown;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A fetch for viem's HTTP transport (see the top of this file). */
export const rpcFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.ok) return response;
  const text = await response.text();
  const body = parsed(text);
  const firstError = Array.isArray(body)
    ? (body as RpcAnswer[]).find((answer) => answer?.error !== undefined)?.error
    : undefined;
  // viem reads a failed answer's error from an object body only
  const kept = firstError !== undefined ? JSON.stringify({ error: firstError }) : text;
  return new Response(kept, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};
