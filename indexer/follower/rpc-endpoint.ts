// An RPC URL as the node's clients send it. Fetch refuses a URL holding credentials
// (https://user:secret@host/…), which some hosted nodes hand out; as curl and other clients do,
// they travel instead as an HTTP Basic Authorization header to the URL without them.
export interface RpcEndpoint {
  url: string;
  headers: Record<string, string>;
}

export function rpcEndpoint(rpcUrl: string): RpcEndpoint {
  const url = new URL(rpcUrl);
  if (url.username === '' && url.password === '') return { url: rpcUrl, headers: {} };
  const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  url.username = '';
  url.password = '';
  return {
    url: url.href,
    headers: { authorization: `Basic ${Buffer.from(credentials).toString('base64')}` },
  };
}
