// What the service's log says of the answers it failed, for /v1 and /graphql alike. An upstream's
// failure (UPSTREAM_UNAVAILABLE: unreachable, too slow, a bad answer) is that upstream's outage,
// told in one line when it starts (the upstream, the route or field it first failed, the cause in
// a few words) and one when the upstream answers again (how many requests failed meanwhile), as
// the indexing status source and the Redis connection tell theirs: logged per request with its
// stack, a subgraph outage took 31 lines a request and flooded the log under traffic. A bug
// (INTERNAL) is logged every time, with its stack. Whatever an upstream or a library wrote is
// quoted scrubbed of the configured upstream URLs' secrets (providers put API keys in an RPC URL's
// path and query, which viem prints in its errors) and cut short (graphql-request quotes a whole
// answer, megabytes of HTML, in its message).
import { inspect } from 'node:util';
import { GraphQLError } from 'graphql';
import { MAX_QUOTED_CHARS } from '../common/bounded-fetch.ts';
import { innermostMessage } from '../common/error-causes.ts';
import { redactUrl, scrubbedExcerpt } from '../common/url.ts';
import type { GatewayContext } from './context.ts';
import { classifyError, GatewayError, loggedCause } from './errors.ts';
import type { DistributionSource } from './sources/distributions.ts';

/** An upstream as the log names it. */
interface Upstream {
  /** the name its errors give (GatewayError.upstream) */
  name: string;
  /** the setting it is configured by */
  setting: string;
  /** its URL (or a distribution directory) as configured; undefined where none is */
  location: string | undefined;
}

/** the gateway's upstreams */
export interface Upstreams {
  subgraph: Upstream;
  chain: Upstream;
  distributions: Upstream;
  indexingStatus: Upstream;
}

/** where a line goes; each part of the service writes its lines to its own log */
type Log = (line: string) => void;

interface Outage {
  /** the requests it failed, the first included */
  failed: number;
  /** where its start was written, and its end is */
  log: Log;
}

const isUrl = (location: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(location);

export class FailureLog {
  /** the upstreams failing now, by name */
  private readonly outages = new Map<string, Outage>();
  private readonly byName: Map<string, Upstream>;
  /** the configured URLs, whose secrets are scrubbed from anything quoted */
  private readonly urls: string[];

  constructor(private readonly upstreams: Upstreams) {
    const all = Object.values(upstreams);
    this.byName = new Map(all.map((upstream) => [upstream.name, upstream]));
    this.urls = all.flatMap(({ location }) => (location !== undefined && isUrl(location) ? [location] : []));
  }

  /**
   * `error`, answered as `classified`, failed the answer to `where` (a route, a /graphql field): a
   * bug is written to `log` with its stack; an upstream's failure starts its outage, or counts in
   * the one under way; a client's mistake or a missing resource is no failure of the service's.
   */
  failed(where: string, classified: GatewayError, error: unknown, log: Log): void {
    const cause = loggedCause(classified, error);
    if (cause === undefined) return;
    if (classified.code !== 'UPSTREAM_UNAVAILABLE') {
      log(`${where} failed on an internal error (a bug; the client got no details): ${this.report(cause)}`);
      return;
    }
    const upstream = classified.upstream ?? 'an upstream';
    const outage = this.outages.get(upstream);
    if (outage) {
      outage.failed++;
      return;
    }
    this.outages.set(upstream, { failed: 1, log });
    log(
      `${this.named(upstream)} is failing: ${this.quoted(innermostMessage(cause))} (first at ${where}); requests needing it fail until it answers again`,
    );
  }

  /** `upstream` gave a request what it asked: the end of its outage, if it had one. */
  answered(upstream: string): void {
    const outage = this.outages.get(upstream);
    if (!outage) return;
    this.outages.delete(upstream);
    const requests = outage.failed === 1 ? '1 request' : `${outage.failed} requests`;
    outage.log(`${this.named(upstream)} answers again; ${requests} failed on it meanwhile`);
  }

  /**
   * Tells of one request's answer, which `context` served: the upstreams its `errors` are failures
   * of, once each, at the /graphql field each failed (`log` says where to; the REST layer tells its
   * failures itself, naming the route, and passes none); then those that gave it data and did not
   * fail it (the subgraph's block and the chain head it read show in `context`).
   */
  settled(context: GatewayContext, errors: readonly unknown[], log?: Log): void {
    const failed = new Set<string | undefined>();
    for (const error of errors) {
      const classified = classifyError(error);
      if (classified.code !== 'UPSTREAM_UNAVAILABLE' || failed.has(classified.upstream)) continue;
      failed.add(classified.upstream);
      if (log) this.failed(graphqlPlace(classified), classified, error, log);
    }
    const { subgraph, chain } = this.upstreams;
    if (context.subgraph.freshness.indexedBlock !== null && !failed.has(subgraph.name))
      this.answered(subgraph.name);
    if (context.chain?.readsFrom != null && !failed.has(chain.name)) this.answered(chain.name);
  }

  /** `source`, telling this log when a distribution that failed to load loads again */
  distributionsAnswering(source: DistributionSource): DistributionSource {
    const upstream = this.upstreams.distributions.name;
    // A distribution loaded is news of its upstream only if it was read: one loaded before is
    // answered from memory, while the upstream may still be down. One that failed is not kept, so
    // it is read again next time.
    const failing = new Set<string>();
    return {
      load: async (round) => {
        try {
          const loaded = await source.load(round);
          if (failing.delete(round.uri)) {
            failing.clear();
            this.answered(upstream);
          }
          return loaded;
        } catch (error) {
          if (error instanceof GatewayError && error.code === 'UPSTREAM_UNAVAILABLE') failing.add(round.uri);
          throw error;
        }
      },
    };
  }

  /** `upstream` as a line names it: its name and setting, and where it is as it may be printed */
  private named(upstream: string): string {
    const known = this.byName.get(upstream);
    if (known?.location === undefined) return upstream;
    const shown = isUrl(known.location) ? redactUrl(known.location) : known.location;
    return `${upstream} (${known.setting} ${shown})`;
  }

  private quoted(text: string): string {
    return scrubbedExcerpt(text, MAX_QUOTED_CHARS, this.urls);
  }

  /**
   * A bug as a log reports it: each error of its chain of causes with its message quoted and its
   * stack frames. A stack is its error's message (which may quote a URL, so it is quoted scrubbed
   * here) and its frames, code locations, which name no upstream. A GraphQL error wrapping
   * another (graphql-js placing it in the document, internalError classifying it) only repeats it.
   */
  private report(bug: unknown): string {
    const parts: string[] = [];
    const walked = new Set<unknown>();
    for (let current = bug; current != null && !walked.has(current); current = causeOf(current)) {
      walked.add(current);
      if (current instanceof GraphQLError && current.originalError) continue;
      if (!(current instanceof Error)) {
        parts.push(this.quoted(inspect(current)));
        break;
      }
      const frames = (current.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
      parts.push([`${current.name}: ${this.quoted(current.message)}`, ...frames].join('\n'));
    }
    return parts.join('\ncaused by: ');
  }
}

/** where in /graphql an error happened, as the log names it: the field it failed, if any */
export function graphqlPlace(error: GatewayError): string {
  return error.path ? `/graphql field ${error.path.join('.')}` : '/graphql';
}

/** what `error` was caused by: the error a GraphQL error wraps, or its cause */
function causeOf(error: unknown): unknown {
  if (error instanceof GraphQLError) return error.originalError ?? error.cause;
  return error instanceof Error ? error.cause : undefined;
}
