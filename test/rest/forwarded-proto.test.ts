// Behind a proxy TRUST_PROXY trusts, X-Forwarded-Proto names the protocol of every absolute URL the
// service writes without PUBLIC_BASE_URL (Link headers, problem types, the discovery documents,
// which caches keep for an hour): only http or https may come from it, and only the item a trusted
// proxy wrote, never text a client put there.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DISCOVERY_DOCUMENTS } from '../../rest/document-table.ts';
import { listen, registryOnlyRestApp } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

/** a value a client could send to put its own link beside the service's */
const INJECTED = 'evil>; rel="next", <https://attacker.example/x';

let behindProxy: { url: string; close(): Promise<void> };
let direct: { url: string; close(): Promise<void> };
beforeAll(async () => {
  behindProxy = await listen(registryOnlyRestApp({ trustProxy: 1 }));
  direct = await listen(registryOnlyRestApp());
});
afterAll(async () => {
  await behindProxy.close();
  await direct.close();
});

/** the service's own base under `protocol`: http://127.0.0.1:port as https://127.0.0.1:port */
const under = (protocol: 'http' | 'https', base: string) => base.replace(/^http:/, `${protocol}:`);
const linkOf = async (base: string, headers: Record<string, string>) =>
  (await call(base, '/v1/contracts', { headers })).headers.get('link');

describe('behind a trusted proxy', () => {
  it.each(['https', 'HTTPS', ' Https '])(
    'names the service with https where the proxy forwards %j',
    async (forwarded) => {
      expect(await linkOf(behindProxy.url, { 'X-Forwarded-Proto': forwarded })).toBe(
        `<${under('https', behindProxy.url)}/openapi.json>; rel="service-desc"`,
      );
    },
  );

  it.each([INJECTED, 'ftp', 'javascript', 'https:', ''])(
    "names the service with its connection's http where the header says %j",
    async (forwarded) => {
      expect(await linkOf(behindProxy.url, { 'X-Forwarded-Proto': forwarded })).toBe(
        `<${behindProxy.url}/openapi.json>; rel="service-desc"`,
      );
    },
  );

  it.each([
    ['http, https', 'https'],
    ['https, http', 'http'],
    ['evil, https', 'https'],
  ] as const)(
    "takes the item the one trusted proxy appended to %j, not the client's in front of it",
    async (forwarded, protocol) => {
      const headers = { 'X-Forwarded-Proto': forwarded, 'X-Forwarded-For': '203.0.113.7' };
      expect(await linkOf(behindProxy.url, headers)).toBe(
        `<${under(protocol, behindProxy.url)}/openapi.json>; rel="service-desc"`,
      );
    },
  );

  describe('given a header that is no protocol', () => {
    const headers = { 'X-Forwarded-Proto': INJECTED };

    it("types a problem under the connection's own base", async () => {
      const { status, body } = await call(behindProxy.url, '/v1/nothing', { headers });
      expect(status).toBe(404);
      expect(body.type).toBe(`${behindProxy.url}/problems/not-found`);
    });

    it("serves openapi.json under the connection's own base", async () => {
      const { body } = await call(behindProxy.url, DISCOVERY_DOCUMENTS.openapi.path, { headers });
      expect(body.servers).toEqual([{ url: behindProxy.url }]);
    });

    it.each([DISCOVERY_DOCUMENTS.llms.path, DISCOVERY_DOCUMENTS.aiPlugin.path, '/problems/not-found'])(
      "serves %s naming only the connection's own base",
      async (path) => {
        const text = await (await fetch(`${behindProxy.url}${path}`, { headers })).text();
        expect(text).toContain(`${behindProxy.url}/openapi.json`);
        expect(text).not.toContain('attacker.example');
        expect(text).not.toContain('evil');
      },
    );
  });
});

describe('without a trusted proxy', () => {
  it("names the service with its connection's http whatever X-Forwarded-Proto says", async () => {
    expect(await linkOf(direct.url, { 'X-Forwarded-Proto': 'https' })).toBe(
      `<${direct.url}/openapi.json>; rel="service-desc"`,
    );
  });
});
