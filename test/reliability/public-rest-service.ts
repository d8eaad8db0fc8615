// The REST service as the reliability suites run it over their fault proxies, as a public deployment
// answers (a public base, so that any loopback address in a body is a leak; no cache, so that every
// request reaches the upstreams; no rate limit), and the closing after each test of what it started.
import { afterEach } from 'vitest';
import type { Gateway } from '../../gateway/server.ts';
import { listen, testRestApp } from '../harness/stack.ts';

export interface Closable {
  close(): Promise<void>;
}

/** The REST service over `gateway` on loopback. */
export function publicRestService(gateway: Gateway): Promise<{ url: string } & Closable> {
  return listen(testRestApp(gateway, { publicBaseUrl: 'https://api.example' }));
}

/** Closes what each test started once it ends; call it at a suite file's top level. */
export function closedAfterEachTest() {
  const started: Closable[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((service) => service.close()));
  });
  return {
    /** the REST service over `gateway` for one test: its URL */
    async serve(gateway: Gateway): Promise<string> {
      const service = await publicRestService(gateway);
      started.push(service);
      return service.url;
    },
    /** closes `closable` after the test */
    track(closable: Closable): void {
      started.push(closable);
    },
  };
}
