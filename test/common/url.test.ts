// What the project prints of text that quotes URLs (common/url.ts scrubUrls): log lines and upstream
// errors may quote a URL whole, or only the path of the request they failed, where providers put keys.
// What it prints of a tool's output whose links a person must copy (urlSecretsHidden): the links.
// And what it prints of REDIS_URL (redactRedisUrl): the server and database, never the password.
import { describe, expect, it } from 'vitest';
import { redactRedisUrl, scrubbedExcerpt, scrubUrls, urlSecretsHidden } from '../../common/url.ts';

describe('scrubUrls', () => {
  it('cuts every URL written out in the text to its scheme and host', () => {
    expect(
      scrubUrls('connect https://user:pw@db.example:5432/graph?key=k1 failed; try http://a.example/x'),
    ).toBe('connect https://db.example:5432/… failed; try http://a.example/…');
  });

  it('hides the path and query of a known URL where the text quotes them alone', () => {
    const url = 'https://gateway.example/api/KEY123/subgraphs/id/Qm?token=T9';
    expect(scrubUrls('no subgraph is served at /api/KEY123/subgraphs/id/Qm (query ?token=T9)', [url])).toBe(
      'no subgraph is served at … (query …)',
    );
  });

  it('leaves text without URLs as it is', () => {
    expect(scrubUrls('connect ECONNREFUSED 127.0.0.1:8030', ['http://127.0.0.1:8030/'])).toBe(
      'connect ECONNREFUSED 127.0.0.1:8030',
    );
  });

  it('leaves text it scrubbed before, and the punctuation after a URL, as they are', () => {
    const once = scrubUrls(
      'via http://127.0.0.1:8545/?apikey=K1; store /tmp/x. See https://a.example/k2, or http://b.example:80; then',
    );
    expect(once).toBe(
      'via http://127.0.0.1:8545/…; store /tmp/x. See https://a.example/…, or http://b.example:80; then',
    );
    expect(scrubUrls(once)).toBe(once);
  });
});

describe('urlSecretsHidden', () => {
  const node = 'https://deployer:pw7@graph.example:8020/key123/';

  it('keeps the path of a URL the tool answered, and hides its user info and query', () => {
    expect(
      urlSecretsHidden(
        'Queries (HTTP): https://graph.example/subgraphs/name/fund-protocol; see https://u:pw@h.example/q/1?key=K9#x.',
        [node],
      ),
    ).toBe(
      'Queries (HTTP): https://graph.example/subgraphs/name/fund-protocol; see https://h.example/q/1?….',
    );
  });

  it('shows a URL the tool was given as redactUrl does, and hides its path wherever it appears', () => {
    expect(
      urlSecretsHidden(
        `Deploying to Graph node ${node}: 404 for /key123/ at https://graph.example:8000/key123/subgraphs/name/x`,
        [node],
      ),
    ).toBe(
      'Deploying to Graph node https://graph.example:8020/…: 404 for … at https://graph.example:8000…subgraphs/name/x',
    );
  });

  it('leaves text it hid secrets in before as it is', () => {
    const once = urlSecretsHidden(`at ${node} and https://h.example/a?k=1`, [node]);
    expect(urlSecretsHidden(once, [node])).toBe(once);
  });
});

describe('redactRedisUrl', () => {
  it('shows the server and database of a Redis URL without its user and password', () => {
    expect(redactRedisUrl('rediss://counter:hunter2@redis.internal:6380/2')).toBe(
      'rediss://redis.internal:6380/2',
    );
  });

  it("fills in Redis's default port and database where the URL leaves them out", () => {
    expect(redactRedisUrl('redis://:hunter2@10.0.0.5')).toBe('redis://10.0.0.5:6379/0');
  });

  it('hides a path that is not a database number, as redactUrl does', () => {
    expect(redactRedisUrl('redis://redis.internal:6379/hunter2')).toBe('redis://redis.internal:6379/…');
  });
});

describe('scrubbedExcerpt', () => {
  const rpc = 'https://node.example/v3/KEY123?apikey=SECRET2';

  it('quotes a short text whole on one line, a configured URL and its path and query hidden', () => {
    expect(scrubbedExcerpt(`request to ${rpc}\n  failed (path /v3/KEY123)`, 500, [rpc])).toBe(
      'request to https://node.example/… failed (path …)',
    );
  });

  it('cuts a long text to the characters asked for, marking the cut, with no secret in what is kept', () => {
    const long = `${rpc} ${'<html>'.repeat(200_000)}`;
    const quoted = scrubbedExcerpt(long, 100, [rpc]);
    expect(quoted).toBe(`https://node.example/… ${'<html>'.repeat(13)}<html…`.slice(0, 100) + '…');
    expect(quoted).not.toMatch(/KEY123|SECRET2/);
  });
});
