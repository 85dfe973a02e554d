import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import type * as Http from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import type * as V8 from 'node:v8';
import { ConfigError, describeThrown, HookledgerError, InputError, UsageError } from '../domain/errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { parseInvocationFilter } from '../ledger/queries/filters.js';
import { parseNamedTimeBound } from '../domain/time.js';
import { parseInvocation, type Runner } from '../runner/runner.js';
import { answerClaudePayload, type OnErrorPolicy } from './claude.js';
import { invocationFromClaude } from './claude-input.js';
import { claudeHttpBody, unknownEventHttpBody } from './claude-output.js';
import { answerMeerkatPayload } from './meerkat.js';
import { MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES, meerkatFailureAnswer } from './meerkat-output.js';
import { oneLine } from '../domain/text.js';

const requireBuiltin = createRequire(import.meta.url);

/**
 * hookledger over HTTP: one long-lived process (no process start per tool call) serving
 * Claude Code `http` hooks and a JSON API. Every route but /healthz needs the bearer token,
 * checked before the body is read, so an unauthenticated request never reaches the ledger.
 */

/** Default largest request body. Claude payloads carry whole files (Write content, Read results). */
export const DEFAULT_MAX_BODY_BYTES = 8 * 1024 * 1024;
const DEFAULT_DENIALS_LIMIT = 50;
const MAX_DENIALS_LIMIT = 1000;
/** The query parameters of GET /v1/denials besides the filter fields. */
const PAGE_PARAMS = new Set(['limit', 'cursor']);

export interface HookServerOptions {
  runner: Runner;
  ledger: Ledger;
  /** The bearer token every request but /healthz must carry. */
  token: string;
  /** What the Claude endpoint answers for a blocking event when hookledger cannot decide. Default deny. */
  onError?: OnErrorPolicy;
  maxBodyBytes?: number;
  /** meerkat's `[hooks] payload_max_bytes` for POST /meerkat: larger invocations are refused, answers kept under it. Default 128 KiB. */
  meerkatPayloadMaxBytes?: number;
  /** Receives one line per problem worth an operator's attention (never per request). */
  log?: (line: string) => void;
  /** GET /metrics (behind the bearer token like every route but /healthz): Prometheus exposition text. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
}

export interface HookServer {
  readonly server: Server;
  /** Starts listening (host default 127.0.0.1); resolves with the bound address. */
  listen(port: number, host?: string): Promise<{ host: string; port: number; url: string }>;
  /** Requests being handled right now. */
  readonly inFlight: number;
  /**
   * Graceful shutdown: stops accepting, answers 503 to new requests on open connections,
   * waits for requests in flight (at most `drainMs`), then drains background hooks (at most
   * `drainMs` more). Does not close the ledger.
   */
  close(options?: { drainMs?: number }): Promise<void>;
}

/** An error a route answers with its own HTTP status, a stable code and one clear line. */
export class HttpError extends HookledgerError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
  ) {
    super(code, message);
  }
}

/** Creates (but does not start) the hookledger HTTP server. */
export function createHookServer(options: HookServerOptions): HookServer {
  const { runner, ledger } = options;
  const policy = options.onError ?? 'deny';
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const meerkatLimits = { policy, payloadMaxBytes: options.meerkatPayloadMaxBytes ?? MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES };
  const log = options.log ?? (() => {});
  const tokenDigest = digest(options.token);
  let inFlight = 0;
  let closing = false;
  const idleWaiters: (() => void)[] = [];

  // node:http (with net and the stream machinery, about 2 ms) is loaded when a server starts, not
  // when the package root is imported: a hook config that imports 'hookledger' loads this module.
  const { createServer } = requireBuiltin('node:http') as typeof Http;
  const server = createServer((req, res) => {
    inFlight += 1;
    res.on('close', () => {
      inFlight -= 1;
      if (inFlight === 0) for (const wake of idleWaiters.splice(0)) wake();
    });
    handle(req, res).catch((error: unknown) => {
      const expected = error instanceof HttpError || (error instanceof HookledgerError && statusFor(error) < 500);
      if (!expected) log(`hookledger serve: ${req.method} ${req.url}: ${describeThrown(error)}`);
      if (res.headersSent) return res.destroy();
      const failure = errorBody(error);
      if (isMeerkatHookCall(req)) {
        // meerkat fails the whole agent run on any non-2xx: answer 200 under the error policy.
        log(`hookledger serve: ${req.method} ${req.url}: ${failure.message}`);
        return sendJson(res, 200, meerkatFailureAnswer(failure.message, policy, meerkatLimits.payloadMaxBytes));
      }
      if (!isClaudeHookCall(req)) return sendJson(res, failure.status, { error: { code: failure.code, message: failure.message } });
      // A Claude Code hook call is answered 200 in Claude's format under the error policy
      // (the event is unknown): Claude Code reads any error status as a non-blocking error
      // and would run the tool. Nothing was recorded.
      if (expected) log(`hookledger serve: ${req.method} ${req.url}: ${failure.message}`);
      sendJson(res, 200, unknownEventHttpBody(failure.message, policy));
    });
  });
  // Claude Code's hook client keeps connections alive between tool calls.
  server.keepAliveTimeout = 65_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = pathOf(req);
    if (closing) {
      res.setHeader('connection', 'close');
      throw new HttpError(503, 'shutting_down', 'hookledger is shutting down');
    }
    if (path === '/healthz') {
      requireMethod(req, 'GET');
      return sendJson(res, 200, { status: 'ok' });
    }
    if (!authorised(req)) {
      res.setHeader('www-authenticate', 'Bearer realm="hookledger"');
      // Nothing of this request is read or recorded; the connection is not reused.
      res.setHeader('connection', 'close');
      throw new HttpError(
        401,
        'unauthorised',
        'missing or wrong bearer token (Authorization: Bearer <token>; see the token file serve printed)',
      );
    }
    if (path === '/claude' || path === '/v1/claude') {
      requireMethod(req, 'POST');
      const payload = await readJsonBody(req, res);
      if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
        throw new HttpError(400, 'input_invalid', 'body: expected the Claude Code hook JSON object');
      }
      const { answer } = await answerClaudePayload(runner, payload, policy, 'body');
      if (answer.stderr !== null && answer.exitCode !== 2 && answer.stderr.startsWith('hookledger:')) log(answer.stderr);
      return sendJson(res, 200, claudeHttpBody(answer));
    }
    if (path === '/meerkat' || path === '/v1/meerkat') {
      requireMethod(req, 'POST');
      const payload = await readJsonBody(
        req,
        res,
        meerkatLimits.payloadMaxBytes,
        '[hooks] payload_max_bytes (serve --meerkat-payload-max-bytes)',
      );
      const outcome = await answerMeerkatPayload(runner, payload, meerkatLimits, 'body');
      if (outcome.problem !== null) log(`hookledger serve: POST /meerkat: ${outcome.problem}`);
      return sendJson(res, 200, outcome.answer);
    }
    if (path === '/v1/invocations') {
      requireMethod(req, 'POST');
      const body = await readJsonBody(req, res);
      const input =
        typeof body === 'object' && body !== null && !Array.isArray(body) && 'hook_event_name' in body
          ? invocationFromClaude(body, 'body')
          : body;
      const report = await runner.run(parseInvocation(input, 'body')).catch(rethrowAs('body'));
      return sendJson(res, 200, report);
    }
    const explainMatch = /^\/v1\/invocations\/([^/]+)$/.exec(path);
    if (explainMatch) {
      requireMethod(req, 'GET');
      let ref: string;
      try {
        ref = decodeURIComponent(explainMatch[1]!);
      } catch {
        throw new HttpError(400, 'input_invalid', `path: "${explainMatch[1]}" is not valid percent-encoding`);
      }
      return sendJson(res, 200, await ledger.explain(ref));
    }
    if (path === '/metrics' && options.metrics) {
      requireMethod(req, 'GET');
      const { contentType, body } = await options.metrics();
      res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    if (path === '/v1/denials') {
      requireMethod(req, 'GET');
      const { filter, page } = denialsQuery(new URL(req.url ?? '/', 'http://localhost').searchParams);
      const { rows, nextCursor } = await ledger.listDenials(filter, page);
      return sendJson(res, 200, { denials: rows, nextCursor });
    }
    throw new HttpError(
      404,
      'not_found',
      `no route ${req.method} ${path} (routes: POST /claude, POST /meerkat, POST /v1/invocations, GET /v1/invocations/:id, GET /v1/denials, GET /metrics, GET /healthz)`,
    );
  }

  function authorised(req: IncomingMessage): boolean {
    const header = req.headers.authorization;
    if (typeof header !== 'string') return false;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    // Compare digests: equal length, and the time taken says nothing about the token.
    return match !== null && timingSafeEqual(digest(match[1]!), tokenDigest);
  }

  async function readJsonBody(
    req: IncomingMessage,
    res: ServerResponse,
    limit = maxBodyBytes,
    limitName = 'serve --max-body-bytes',
  ): Promise<unknown> {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      refuseOversized(req, res);
      throw new HttpError(413, 'body_too_large', `body: ${declared} bytes exceeds the ${limit}-byte limit (${limitName})`);
    }
    const text = await new Promise<string>((resolve, reject) => {
      // Plain listeners rather than `for await`: the async iterator allocated a few KB per
      // request (its promises, the end-of-stream watcher), and every KB per decision brings the
      // next scavenge closer (README, "p99 and allocation").
      const chunks: Buffer[] = [];
      let size = 0;
      const done = (error: Error | null, body = '') => {
        req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
        if (error) reject(error);
        else resolve(body);
      };
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > limit) {
          done(new HttpError(413, 'body_too_large', `body: exceeds the ${limit}-byte limit (${limitName})`));
          refuseOversized(req, res);
          return;
        }
        chunks.push(chunk);
      };
      const onEnd = () => done(null, (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)).toString('utf8'));
      const onError = (error: Error) => done(error);
      const onClose = () => done(new HttpError(400, 'input_invalid', 'body: the connection closed before the body was complete'));
      req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
    });
    if (BLANK.test(text)) throw new HttpError(400, 'input_invalid', 'body: empty; expected JSON');
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      // V8 quotes the start of the text in its message, newlines and all: keep the error one line.
      throw new HttpError(400, 'input_invalid', `body: not valid JSON (${oneLine(describeThrown(error))})`);
    }
  }

  /**
   * The rest of an oversized body is read and thrown away, so the client (still sending)
   * gets the 413 rather than a reset connection; the connection is then closed.
   */
  function refuseOversized(req: IncomingMessage, res: ServerResponse): void {
    res.setHeader('connection', 'close');
    req.removeAllListeners('data');
    req.resume();
  }

  return {
    server,
    get inFlight() {
      return inFlight;
    },
    listen(port, host = '127.0.0.1') {
      growYoungGeneration();
      return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          const address = server.address() as AddressInfo;
          const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
          resolve({ host: address.address, port: address.port, url: `http://${shownHost}:${address.port}` });
        });
      });
    },
    async close(closeOptions) {
      const drainMs = closeOptions?.drainMs ?? 5000;
      closing = true;
      const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      if (inFlight > 0) {
        await Promise.race([new Promise<void>((resolve) => idleWaiters.push(resolve)), delay(drainMs)]);
      }
      await runner.close({ deadlineMs: drainMs });
      server.closeAllConnections();
      await stopped;
    },
  };
}

/** GET /v1/denials query → the shared invocation filter plus the page. Unknown parameters are a 400. */
export function denialsQuery(params: URLSearchParams): {
  filter: ReturnType<typeof parseInvocationFilter>;
  page: { limit: number; cursor: string | null };
} {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of params) {
    if (PAGE_PARAMS.has(key)) continue;
    if (key === 'since' || key === 'until') fields[key] = parseNamedTimeBound(key, value);
    else fields[key] = value;
  }
  const filter = parseInvocationFilter(fields, 'query');
  const limitText = params.get('limit');
  const limit = limitText === null ? DEFAULT_DENIALS_LIMIT : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_DENIALS_LIMIT) {
    throw new InputError(`query: limit: "${limitText}" must be a whole number from 1 to ${MAX_DENIALS_LIMIT}`);
  }
  return { filter, page: { limit, cursor: params.get('cursor') } };
}

function requireMethod(req: IncomingMessage, method: string): void {
  if (req.method !== method) throw new HttpError(405, 'method_not_allowed', `${req.method} is not allowed here; use ${method}`);
}

function rethrowAs(where: string) {
  return (error: unknown): never => {
    if (error instanceof HookledgerError) throw error;
    throw new HttpError(500, 'internal', `${where}: ${describeThrown(error)}`);
  };
}

/** HookledgerError codes → HTTP statuses (an HttpError carries its own). */
function statusFor(error: HookledgerError): number {
  if (error instanceof HttpError) return error.status;
  if (error.code === 'input_invalid' || error.code === 'usage') return 400;
  if (error.code === 'not_found') return 404;
  if (error.code.startsWith('ledger_')) return 503;
  return 500;
}

/** The status, code and one-line message a failed request is answered with. */
function errorBody(error: unknown): { status: number; code: string; message: string } {
  if (error instanceof HookledgerError) return { status: statusFor(error), code: error.code, message: error.message };
  return { status: 500, code: 'internal', message: `internal error: ${describeThrown(error)}` };
}

/** The young generation's size (both semi-spaces), bytes. */
function newSpaceBytes(): number {
  return (
    (requireBuiltin('node:v8') as typeof V8).getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
  );
}

/**
 * Grows V8's young generation to its maximum before the server takes requests. V8 starts it
 * small and grows it only while many young objects survive; a request's garbage dies young, so
 * serve otherwise runs with 8 MB of new space and a scavenge (0.5–1.5 ms, several decisions' time)
 * every ~170 requests, 0.6% of them: inside the 99th percentile. Holding objects across a few
 * scavenges here (about 0.1–0.2 s, once) grows it to the maximum (32 MB here), and a busy server
 * keeps it: scavenges fall about fourfold. It costs that memory, and V8 gives it back when the
 * server idles (its memory reducer), after which a later burst runs at the small size again.
 * `--max-semi-space-size` set at run time (`v8.setFlagsFromString`) does not take effect, and node
 * flags in installed commands are not an option. Stops after 500 ms whatever happened.
 */
function growYoungGeneration(): void {
  const started = performance.now();
  // Released when this returns: the objects only had to survive the scavenges meanwhile.
  const held: unknown[] = new Array(200_000);
  let size = newSpaceBytes();
  for (let unchanged = 0; unchanged < 3 && performance.now() - started < 500;) {
    for (let i = 0; i < 200_000; i++) held[i] = { i, next: held[(i * 7) % 200_000] ?? null };
    const now = newSpaceBytes();
    if (now > size) {
      size = now;
      unchanged = 0;
    } else unchanged += 1;
  }
}

/** Whitespace only (what `trim()` removes), tested without copying the body. */
const BLANK = /^\s*$/;

/** The routes a hook calls on every event, whose request target needs no URL parsing. */
const PLAIN_PATHS = new Set(['/claude', '/v1/claude', '/meerkat', '/v1/meerkat', '/v1/invocations', '/healthz']);

/** The request's path without trailing slashes ("/" for the root); a hook route's is taken as is, without a URL object per request. */
function pathOf(req: IncomingMessage): string {
  const target = req.url ?? '/';
  if (PLAIN_PATHS.has(target)) return target;
  return new URL(target, 'http://localhost').pathname.replace(/\/+$/, '') || '/';
}

/** A meerkat http hook's request: POST to the meerkat endpoint. */
function isMeerkatHookCall(req: IncomingMessage): boolean {
  const path = pathOf(req);
  return req.method === 'POST' && (path === '/meerkat' || path === '/v1/meerkat');
}

/** A Claude Code http hook's request: POST to the Claude endpoint. */
function isClaudeHookCall(req: IncomingMessage): boolean {
  const path = pathOf(req);
  return req.method === 'POST' && (path === '/claude' || path === '/v1/claude');
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** Where the bearer token came from. */
export interface ResolvedToken {
  token: string;
  source: 'flag' | 'env' | 'file';
  /** The token file, when the token lives in one. */
  file: string | null;
  /** True when this start generated the token file. */
  created: boolean;
}

/**
 * The server's bearer token: `--token`, else `HOOKLEDGER_TOKEN`, else the file
 * `<ledger path>.token`, generated on first start (32 random bytes, hex) and readable only
 * by the user. A token file others can read is refused rather than trusted.
 */
export function resolveServerToken(options: { flag?: string | undefined; env: NodeJS.ProcessEnv; ledgerPath: string }): ResolvedToken {
  const given = options.flag ?? options.env.HOOKLEDGER_TOKEN;
  if (given !== undefined && given !== '') {
    if (given.trim().length < 16) throw new UsageError('--token / HOOKLEDGER_TOKEN: use at least 16 characters');
    return { token: given.trim(), source: options.flag !== undefined ? 'flag' : 'env', file: null, created: false };
  }
  if (options.ledgerPath === ':memory:')
    throw new UsageError('with --db :memory: there is no token file; give --token or set HOOKLEDGER_TOKEN');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(options.ledgerPath))
    throw new UsageError('a ledger on a database server has no token file beside it; give --token or set HOOKLEDGER_TOKEN');
  const file = `${resolve(options.ledgerPath)}.token`;
  try {
    const fd = openSync(file, 'wx', 0o600);
    const token = randomBytes(32).toString('hex');
    writeSync(fd, `${token}\n`);
    closeSync(fd);
    return { token, source: 'file', file, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new ConfigError(`cannot create the token file ${file}: ${describeThrown(error)}`);
    }
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new ConfigError(
      `token file ${file} is readable by other users (mode ${mode.toString(8)}); run chmod 600 on it, or delete it to generate a new one`,
    );
  }
  const token = readFileSync(file, 'utf8').trim();
  if (token.length < 16)
    throw new ConfigError(`token file ${file} holds no usable token (at least 16 characters); delete it to generate a new one`);
  return { token, source: 'file', file, created: false };
}
