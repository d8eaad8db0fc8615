// The links every answer gives to the service's own documents (the Link header to openapi.json, the
// 404's hint, a problem page's links) name them under the public base URL: a PUBLIC_BASE_URL below a
// path (a proxy serving the service at https://api.example.com/fund-data/) keeps its path, where a
// root-relative link would leave the service; without one, the Host the client sent names them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, registryOnlyRestApp } from '../harness/stack.ts';
import { call } from './openapi-responses.ts';

const PUBLIC_BASE_URL = 'https://api.example.com/fund-data';
let prefixed: { url: string; close(): Promise<void> };
let unconfigured: { url: string; close(): Promise<void> };
beforeAll(async () => {
  prefixed = await listen(registryOnlyRestApp({ publicBaseUrl: PUBLIC_BASE_URL }));
  unconfigured = await listen(registryOnlyRestApp());
});
afterAll(async () => {
  await prefixed.close();
  await unconfigured.close();
});

describe('under a PUBLIC_BASE_URL below a path', () => {
  it('links openapi.json under it in the Link header of an answer', async () => {
    const { status, headers } = await call(prefixed.url, '/v1/contracts');
    expect(status).toBe(200);
    expect(headers.get('link')).toBe(`<${PUBLIC_BASE_URL}/openapi.json>; rel="service-desc"`);
  });

  it('links openapi.json under it in the Link header of a problem', async () => {
    const { status, headers } = await call(prefixed.url, '/v1/nothing');
    expect(status).toBe(404);
    expect(headers.get('link')).toBe(`<${PUBLIC_BASE_URL}/openapi.json>; rel="service-desc"`);
  });

  it('names the documents listing the endpoints under it in the 404 of an unknown path', async () => {
    const { body } = await call(prefixed.url, '/v1/nothing');
    expect(body.detail).toBe(
      `No endpoint at /v1/nothing. The endpoints are listed in ${PUBLIC_BASE_URL}/openapi.json and ${PUBLIC_BASE_URL}/llms.txt.`,
    );
  });

  it('links the documents under it from a problem page', async () => {
    const page = await (await fetch(`${prefixed.url}/problems/not-found`)).text();
    expect(page).toContain(
      `See <a href="${PUBLIC_BASE_URL}/llms-full.txt">${PUBLIC_BASE_URL}/llms-full.txt</a> and <a href="${PUBLIC_BASE_URL}/openapi.json">${PUBLIC_BASE_URL}/openapi.json</a>.`,
    );
  });
});

describe('without a PUBLIC_BASE_URL', () => {
  it('links openapi.json under the Host the client sent', async () => {
    const { headers } = await call(unconfigured.url, '/v1/contracts');
    expect(headers.get('link')).toBe(`<${unconfigured.url}/openapi.json>; rel="service-desc"`);
  });
});
