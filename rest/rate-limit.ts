// Rate limits per client IP: a sustained limit (by default 60 per minute) and a burst limit (20 per
// 20 seconds) enforced together, so a client can send 20 requests at once but cannot keep
// more than one per second going. Counters live in memory, or in Redis when one is given so
// limits hold across replicas; while Redis fails (unreachable, hung, slow, or refusing the
// commands), requests pass uncounted, without RateLimit headers, rather than fail or wait more than
// REDIS_COMMAND_TIMEOUT_MS, and the outage is logged once. Both limits are announced in IETF
// RateLimit headers (draft 8). Both count in fixed windows (express-rate-limit), so up to twice a
// limit passes across a window's end, as documented.
import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit, type ClientRateLimitInfo, type Store } from 'express-rate-limit';
import { RedisStore, type Options as RedisStoreOptions, type RedisReply } from 'rate-limit-redis';
import { ConnectionTimeoutError, createClient } from 'redis';
import { backoffMs, type Backoff } from '../common/backoff.ts';
import { redactRedisUrl } from '../common/url.ts';
import { problemBody, sendProblem } from './problems.ts';

export interface RateLimitConfig {
  perMinute: number;
  burst: number;
  burstWindowSeconds: number;
}

export const DEFAULT_RATE_LIMIT: RateLimitConfig = { perMinute: 60, burst: 20, burstWindowSeconds: 20 };

/** The discovery documents' statement of the limits a deployment enforces (`false`: none). */
export function rateLimitStatement(config: RateLimitConfig | false): string {
  return config
    ? `${config.perMinute} requests per minute per IP sustained, and a burst of ${config.burst} requests per ${config.burstWindowSeconds} seconds, each counted in fixed windows (so up to twice a limit can pass across a window's end). Over either: 429 with Retry-After (seconds).`
    : 'This deployment enforces no rate limit.';
}

/** The `detail` of a 429: which limit, and how long to wait. */
export function rateLimitedDetail(limit: number, windowSeconds: number, retryAfter: string): string {
  return `More than ${limit} requests in ${windowSeconds} seconds from your address; retry after ${retryAfter} seconds.`;
}

/** The start-up line saying how the limits are enforced: a replica counting apart from the others shows. */
export function rateLimitSummary(config: RateLimitConfig | false, redisUrl: string | undefined): string {
  if (!config) return `off (RATE_LIMIT_PER_MINUTE=0${redisUrl ? '; REDIS_URL is not used' : ''})`;
  const limits = `${config.perMinute}/min + ${config.burst} per ${config.burstWindowSeconds} s per client IP`;
  return redisUrl
    ? `${limits}, counted in Redis ${redactRedisUrl(redisUrl)}`
    : `${limits}, counted in this process's memory (each replica apart; REDIS_URL shares them)`;
}

/** what the Redis counters need of a connection (connectRedis) */
export interface RedisCommander {
  sendCommand(args: string[]): Promise<unknown>;
  /** Told after each request's counting: with no argument when Redis counted it, else why not. */
  counted(failure?: unknown): void;
}

export interface RedisConnection extends RedisCommander {
  /** Drops the connection at once: commands still waiting for Redis fail, none is waited for. */
  close(): Promise<void>;
}

/** Tries of the first connection, and the wait for each to be accepted. */
const FIRST_CONNECT_TRIES = 3;
const CONNECT_TIMEOUT_MS = 5_000;
/** The first connection's tries, handshake and probe: node-redis bounds none but the tries. */
const FIRST_CONNECT_DEADLINE_MS = 10_000;
/** The waits between reconnections once running: 100 ms after the first failure, doubling up to 5 s. */
const RECONNECT: Backoff = { minMs: 100, maxMs: 5_000 };
/**
 * How long a command may wait for its answer. A Redis on the same network answers in about a
 * millisecond; past this one is hung or overloaded, and each request would wait with it.
 */
const REDIS_COMMAND_TIMEOUT_MS = 500;

class RedisTimeout extends Error {}

/** `reply`, or a RedisTimeout once `ms` have passed without it. */
function answerWithin<T>(reply: Promise<T>, ms: number, timeoutMessage: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisTimeout(timeoutMessage)), ms);
  });
  return Promise.race([reply, timeout]).finally(() => clearTimeout(timer));
}

/** Redis's refusals, and what the operator changes to end them. */
const REFUSAL_FIXES: [RegExp, string][] = [
  [
    /^NOAUTH\b/,
    'this Redis requires a password: put it in REDIS_URL (redis://:<password>@host:port/db, or redis://<user>:<password>@host:port/db for an ACL user)',
  ],
  [/^WRONGPASS\b/, 'the user or password in REDIS_URL is wrong'],
  [
    /^NOPERM\b/,
    "REDIS_URL's user may not run the rate limiter's commands: grant them (ACL SETUSER <user> +select +script|load +evalsha +pttl +set +incr +pexpire ~rl:*)",
  ],
  [/^READONLY\b/, 'REDIS_URL points at a read-only replica: point it at the primary'],
  [
    /^ERR DB index is out of range/,
    "REDIS_URL's database number must be below the server's `databases` setting (16 by default)",
  ],
];

/** A Redis failure as one clause, with what to fix where the failure says it. */
function describeRedisFailure(error: unknown, url: string): string {
  const message = error instanceof Error ? error.message.replace(/\.$/, '') : String(error);
  if (error instanceof ConnectionTimeoutError)
    return new URL(url).protocol === 'rediss:'
      ? `no TLS connection within ${CONNECT_TIMEOUT_MS / 1000} s: a rediss:// URL needs a Redis serving TLS; for one that does not, REDIS_URL starts with redis://`
      : `no connection within ${CONNECT_TIMEOUT_MS / 1000} s: check REDIS_URL's host and port`;
  const fix = REFUSAL_FIXES.find(([refusal]) => refusal.test(message))?.[1];
  return fix ? `${message}: ${fix}` : message;
}

/** rate-limit-redis's store, whose constructor's script loads cannot end the process. */
class CounterStore extends RedisStore {
  constructor(options: RedisStoreOptions) {
    super(options);
    // they are awaited only by the first request, which loads them again when they failed; until
    // then a Redis refusing them (NOAUTH, NOPERM, gone) would be an unhandled rejection
    for (const loaded of [this.incrementScriptSha, this.getScriptSha]) loaded.catch(() => {});
  }
}

/**
 * The outage log of one connection. An outage is whatever keeps requests from being counted, so
 * only a counted request ends it: a connection that is back may still be refused (NOAUTH after a
 * restart with a password). Its causes are logged once each: the lost connection, and the first
 * failure to count since (re)connecting or since the last counted request.
 */
class OutageLog {
  /** requests pass uncounted: the next counted one is logged as the end of the outage */
  private outage = false;
  /** the connection was lost and is not ready again: its failures to count are that loss */
  private connectionLost = false;
  /** a failure to count was logged since the connection was ready or a request was counted */
  private failureLogged = false;

  constructor(
    private readonly log: (line: string) => void,
    private readonly describe: (failure: unknown) => string,
  ) {}

  /** The connection is (re)established: its next failure is news again. */
  ready(): void {
    this.connectionLost = false;
    this.failureLogged = false;
  }

  /** The connection dropped (node-redis retries it): logged once until it is ready again. */
  lost(error: unknown): void {
    if (this.connectionLost) return;
    this.connectionLost = true;
    this.begin(`connection lost (${this.describe(error)})`);
  }

  /** A request was counted (no argument), or was not because of `failure`. */
  counted(failure?: unknown): void {
    if (failure === undefined) {
      this.failureLogged = false;
      if (this.outage) this.log('redis: counting works again; rate limits are enforced again');
      this.outage = false;
    } else if (!this.connectionLost && !this.failureLogged) {
      this.failureLogged = true;
      this.begin(`counting failed (${this.describe(failure)})`);
    }
  }

  private begin(cause: string): void {
    this.outage = true;
    this.log(
      `redis: ${cause}; rate limits are not enforced (requests pass uncounted) until counting works again`,
    );
  }
}

/**
 * `send` (a connection's sendCommand) with each command waiting at most REDIS_COMMAND_TIMEOUT_MS
 * for its answer. Redis answers in order, so a command sent behind one that timed out and is still
 * unanswered would wait for it too: while there is such a command, others fail at once, unsent.
 */
function boundedSender(send: (args: string[]) => Promise<unknown>): (args: string[]) => Promise<unknown> {
  let unanswered = 0;
  return async (args) => {
    if (unanswered > 0)
      throw new RedisTimeout(
        `no answer from Redis within ${REDIS_COMMAND_TIMEOUT_MS} ms (hung or overloaded?): ${unanswered} commands still wait for theirs, so this one was not sent`,
      );
    const reply = send(args);
    try {
      return await answerWithin(
        reply,
        REDIS_COMMAND_TIMEOUT_MS,
        `no answer from Redis within ${REDIS_COMMAND_TIMEOUT_MS} ms to ${args[0]} (hung or overloaded?)`,
      );
    } catch (error) {
      if (error instanceof RedisTimeout) {
        unanswered++;
        const answered = () => void unanswered--;
        reply.then(answered, answered);
      }
      throw error;
    }
  };
}

/** Counts once as every request will, on a key of its own: a Redis that refuses it is a start-up error. */
async function probeCounting(sendCommand: (args: string[]) => Promise<unknown>): Promise<void> {
  const probe = new CounterStore({
    prefix: 'rl:start-up-probe:',
    sendCommand: (...args) => sendCommand(args) as Promise<RedisReply>,
  });
  // express-rate-limit would give the window (init); the probe's counter expires in a second
  probe.windowMs = 1_000;
  await probe.increment('check');
}

/**
 * A node-redis client for the counters. The first connection must succeed within
 * FIRST_CONNECT_DEADLINE_MS and run the counters' script (a REDIS_URL that cannot be reached, or
 * whose Redis refuses the script, fails the start, saying what to fix). After it, every command
 * waits at most REDIS_COMMAND_TIMEOUT_MS, and none is queued while the connection is down or
 * behind one that got no answer (boundedSender), so no request waits longer for Redis. A failure
 * starts an outage, logged once with its cause (OutageLog): requests pass uncounted until one is
 * counted again, which is logged too. A lost connection is retried with backoff.
 */
export async function connectRedis(url: string, log: (line: string) => void): Promise<RedisConnection> {
  if (!/^\/?\d*$/.test(new URL(url).pathname))
    throw new Error(
      'its path is the database number, which must be digits (redis://host:port/0 for database 0)',
    );
  /** the first connection was made and probed: from then on the service counts in this Redis */
  let started = false;
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: {
      connectTimeout: CONNECT_TIMEOUT_MS,
      // the first connection is retried for a Redis still starting, which refuses it at once; one
      // that timed out is not: the host does not answer, or does not speak TLS to rediss://
      reconnectStrategy: (retries, cause) =>
        started
          ? backoffMs(retries, RECONNECT)
          : !(cause instanceof ConnectionTimeoutError) && retries + 1 < FIRST_CONNECT_TRIES && 200,
    },
  });
  const outages = new OutageLog(log, (failure) => describeRedisFailure(failure, url));
  // node-redis emits every socket error; with no listener, Node would end the process on the first.
  // Before the start, the failure is the start's own error.
  client.on('error', (error: Error) => {
    if (started) outages.lost(error);
  });
  client.on('ready', () => outages.ready());
  const sendCommand = boundedSender((args) => client.sendCommand(args));

  try {
    await answerWithin(
      (async () => {
        await client.connect();
        await probeCounting(sendCommand);
      })(),
      FIRST_CONNECT_DEADLINE_MS,
      `no answer within ${FIRST_CONNECT_DEADLINE_MS / 1000} s: check that REDIS_URL's host and port are right and its Redis is running (not stopped)`,
    );
  } catch (error) {
    if (client.isOpen) client.destroy();
    throw new Error(describeRedisFailure(error, url), { cause: error });
  }
  started = true;
  return {
    sendCommand,
    counted: (failure) => outages.counted(failure),
    close: async () => {
      if (client.isOpen) client.destroy();
    },
  };
}

/** Not counted: Redis failed (its connection logs it), so the request passes without RateLimit headers. */
class NotCounted extends Error {}

/** Counters in Redis that, while Redis fails, count nothing and let the request through. */
class OutageTolerantRedisStore extends CounterStore {
  constructor(
    private readonly redis: RedisCommander,
    prefix: string,
  ) {
    super({ prefix, sendCommand: (...args) => redis.sendCommand(args) as Promise<RedisReply> });
  }

  override async increment(key: string): Promise<ClientRateLimitInfo> {
    let counts: ClientRateLimitInfo;
    try {
      counts = await super.increment(key);
    } catch (error) {
      this.redis.counted(error);
      throw new NotCounted('Redis did not count the request', { cause: error });
    }
    this.redis.counted();
    return counts;
  }
}

/** An IPv4 client as a dual-stack socket (HOST=::) reports it: ::ffff:a.b.c.d */
const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * The counter a client's requests go to: its IPv4 address, or its IPv6 /56 (one subscriber's
 * prefix, express-rate-limit's default). An IPv4-mapped address is its IPv4 address: as IPv6 it
 * would fall in ::/56 with every other IPv4 client, so that one client could lock out all.
 */
function clientKey(ip: string): string {
  return IPV4_MAPPED.exec(ip)?.[1] ?? ipKeyGenerator(ip, 56);
}

export function createRateLimiters(
  config: RateLimitConfig,
  problemBase: (req: Parameters<RequestHandler>[0]) => string,
  redis: RedisCommander | undefined,
): RequestHandler[] {
  const store = (name: string): Store | undefined =>
    redis ? new OutageTolerantRedisStore(redis, `rl:${name}:`) : undefined;
  const limiter = (name: string, limit: number, windowSeconds: number): RequestHandler =>
    rateLimit({
      windowMs: windowSeconds * 1000,
      limit,
      identifier: name,
      standardHeaders: 'draft-8',
      legacyHeaders: false,
      // a CORS preflight is not a request for data; a client whose connection is already gone has
      // no address (req.ip is undefined) and no answer to receive
      skip: (req) => req.method === 'OPTIONS' || req.ip === undefined,
      keyGenerator: (req) => clientKey(req.ip as string),
      // its check reads the generator's source for ipKeyGenerator, which clientKey calls
      validate: { keyGeneratorIpFallback: false },
      ...(redis ? { store: store(name) } : {}),
      handler: (req, res) => {
        const retryAfter = res.getHeader('Retry-After');
        sendProblem(
          res,
          problemBody(
            problemBase(req),
            'rate-limited',
            rateLimitedDetail(limit, windowSeconds, String(retryAfter)),
            req.path,
          ),
        );
      },
    });
  // a request the store could not count reaches express-rate-limit's error path before any header
  // is set: it passes as it is (its own passOnStoreError would log every such request)
  const passUncounted =
    (countOrRefuse: RequestHandler): RequestHandler =>
    (req, res, next) =>
      countOrRefuse(req, res, (error?: unknown) => next(error instanceof NotCounted ? undefined : error));
  return [
    passUncounted(limiter('burst', config.burst, config.burstWindowSeconds)),
    passUncounted(limiter('sustained', config.perMinute, 60)),
  ];
}
