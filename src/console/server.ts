import { createReadStream, existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describeThrown, HookledgerError, InputError, LedgerError, NotFoundError } from '../domain/errors.js';
import { oneLine } from '../domain/text.js';
import type { Ledger, OpenOptions } from '../ledger/ledger.js';
import { packageRoot } from '../ledger/paths.js';
import { writeChunks, type ExportFormat } from '../ledger/queries/export.js';
import { ConsoleSessions, clearedCookie, sessionCookie } from './auth.js';
import { filterFromQuery } from './filters.js';
import { consolePage, errorBody, loginPage } from './layout.js';
import type { IntegrityState, PageContext, PageResult } from './page.js';
import { denialsPage } from './pages/denials.js';
import { explainPage } from './pages/explain.js';
import { hooksPage } from './pages/hooks.js';
import { integrityPage } from './pages/integrity.js';
import { replayPage, replaysPage } from './pages/replays.js';
import { sessionPage, sessionsPage } from './pages/sessions.js';
import { createIntegrityState } from './verify-runner.js';

/** Where `npm run build` puts the console's stylesheet and script (scripts/build-console.ts). */
export const assetsDir = join(packageRoot, 'dist', 'console', 'assets');

const ASSETS: Record<string, string> = {
  'console.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
};

/**
 * Nothing inline may run or style: scripts and styles come only from /assets, forms post only
 * here, nothing may frame the console, and no other origin is contacted.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

export interface ConsoleServerOptions {
  ledger: Ledger;
  token: string;
  /** A `verify --anchor` file whose head the integrity page checks. */
  anchorFile?: string | null;
  /** The ledger as shown in the header (path or URL without password). */
  ledgerLabel?: string;
  log?: (line: string) => void;
  /**
   * How the verify worker opens its own connection to the same ledger (a path, or a URL with
   * its password); default the ledger's location, read-only.
   */
  reopen?: OpenOptions;
}

export interface ConsoleServer {
  readonly server: Server;
  listen(port: number, host: string): Promise<{ url: string; host: string; port: number }>;
  close(): Promise<void>;
}

type Route = (ctx: PageContext, ...params: string[]) => Promise<PageResult>;

const ROUTES: [RegExp, Route][] = [
  [/^\/sessions$/, sessionsPage],
  [/^\/sessions\/([^/]+)$/, sessionPage],
  [/^\/denials$/, denialsPage],
  [/^\/invocations\/([^/]+)$/, explainPage],
  [/^\/hooks$/, hooksPage],
  [/^\/replays$/, replaysPage],
  [/^\/replays\/([^/]+)$/, replayPage],
  [/^\/integrity$/, integrityPage],
];

/**
 * The read-only web console (issue 14). Server-rendered HTML: every page is one request that
 * runs the ledger's query functions and returns a document; a small script (built into
 * /assets/console.js) draws charts. No route writes to the ledger.
 */
export function createConsoleServer(options: ConsoleServerOptions): ConsoleServer {
  const sessions = new ConsoleSessions(options.token);
  const log = options.log ?? (() => undefined);
  const integrity: IntegrityState = createIntegrityState(
    options.reopen ?? { path: options.ledger.location, readonly: true },
    options.anchorFile ?? null,
    log,
  );

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`hookledger console: ${req.method} ${oneLine(req.url ?? '')}: ${oneLine(describeThrown(error))}`);
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error (see the console log)\n');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const path = url.pathname;
    const method = req.method ?? 'GET';

    if (path.startsWith('/assets/')) return serveAsset(res, path.slice('/assets/'.length), method);
    if (path === '/favicon.ico') return send(res, 204, 'image/x-icon', '');
    if (path === '/login' && method === 'POST') return login(req, res);
    if (path === '/logout' && method === 'POST') {
      sessions.end(req.headers.cookie);
      return redirect(res, '/', { 'set-cookie': clearedCookie() });
    }
    const authed = sessions.valid(req.headers.cookie);
    if (path === '/' && method === 'GET') {
      if (authed) return redirect(res, '/sessions');
      return html(res, 200, loginPage({ next: safeNext(url.searchParams.get('next')) }).value);
    }
    if (method !== 'GET' && method !== 'HEAD') return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { allow: 'GET' });
    if (!authed) {
      // Downloads and anything a script fetches get a plain 401; a page, the login form.
      if (path.startsWith('/export.')) return send(res, 401, 'text/plain; charset=utf-8', 'log in first\n');
      return redirect(res, `/?next=${encodeURIComponent(path + url.search)}`, {}, 303);
    }
    const started = performance.now();
    const ctx: PageContext = { ledger: options.ledger, query: url.searchParams, now: Date.now(), integrity };
    if (path === '/export.csv' || path === '/export.jsonl') return exportDownload(res, ctx, path.endsWith('.csv') ? 'csv' : 'jsonl');
    for (const [pattern, route] of ROUTES) {
      const match = pattern.exec(path);
      if (!match) continue;
      let params: string[];
      try {
        params = match.slice(1).map((p) => decodeURIComponent(p));
      } catch {
        return page(
          res,
          { title: 'Bad address', section: null, status: 400, body: errorBody('Bad address', 'the address is not valid') },
          started,
        );
      }
      return page(res, await runPage(route, ctx, params), started);
    }
    return page(res, { title: 'Not found', section: null, status: 404, body: errorBody('Not found', `no page at ${path}`) }, started);
  }

  async function runPage(route: Route, ctx: PageContext, params: string[]): Promise<PageResult> {
    try {
      return await route(ctx, ...params);
    } catch (error) {
      if (error instanceof NotFoundError)
        return { title: 'Not found', section: null, status: 404, body: errorBody('Not found', error.message) };
      if (error instanceof InputError || (error instanceof HookledgerError && error.exitCode === 2)) {
        return { title: 'Bad request', section: null, status: 400, body: errorBody('Bad request', error.message) };
      }
      const unavailable = ledgerUnavailable(error);
      if (unavailable)
        return {
          title: unavailable.title,
          section: null,
          status: unavailable.status,
          body: errorBody(unavailable.title, unavailable.line),
        };
      throw error;
    }
  }

  /** Sends a page; `Server-Timing` says how long its queries and rendering took (the benchmark reads it). */
  function page(res: ServerResponse, result: PageResult, started: number): void {
    const text = consolePage({ ...result, ledger: options.ledgerLabel ?? options.ledger.location }).value;
    res.setHeader('server-timing', `page;dur=${(performance.now() - started).toFixed(1)}`);
    html(res, result.status ?? 200, text);
  }

  async function login(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readForm(req, 16 * 1024);
    const next = safeNext(body?.get('next') ?? null);
    const token = body?.get('token') ?? '';
    if (!body || !sessions.checkToken(token.trim())) {
      return html(res, 401, loginPage({ error: 'That is not the console token.', next }).value);
    }
    redirect(res, next, { 'set-cookie': sessionCookie(sessions.create()) });
  }

  async function exportDownload(res: ServerResponse, ctx: PageContext, format: ExportFormat): Promise<void> {
    let filter;
    try {
      filter = filterFromQuery(ctx.query, undefined, ctx.now);
    } catch (error) {
      if (error instanceof HookledgerError) return send(res, 400, 'text/plain; charset=utf-8', `${oneLine(error.message)}\n`);
      throw error;
    }
    // The first chunk is read before the headers go out, so that a ledger that cannot export
    // (an engine without it, a lost connection) answers with one line instead of a cut-off file.
    const chunks = ctx.ledger.exportText(filter, format)[Symbol.asyncIterator]();
    let first: IteratorResult<string>;
    try {
      first = await chunks.next();
    } catch (error) {
      const unavailable = ledgerUnavailable(error);
      if (unavailable) return send(res, unavailable.status, 'text/plain; charset=utf-8', `${unavailable.line}\n`);
      throw error;
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'content-disposition': `attachment; filename="hookledger-export.${format}"`,
      'cache-control': 'no-store',
    });
    const rest = { [Symbol.asyncIterator]: () => chunks };
    await writeChunks(
      (async function* () {
        if (!first.done) yield first.value;
        yield* rest;
      })(),
      res,
    );
    res.end();
  }

  return {
    server,
    async listen(port, host) {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      const address = server.address() as AddressInfo;
      const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return { url: `http://${shownHost}:${address.port}/`, host: address.address, port: address.port };
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/**
 * A ledger error as the page answering it: what this ledger cannot do (501: its engine does not
 * support it yet) or cannot do now (503: connection lost, locked, …), in the error's one line.
 */
function ledgerUnavailable(error: unknown): { status: number; title: string; line: string } | null {
  if (!(error instanceof LedgerError)) return null;
  const line = oneLine(error.message);
  return error.code === 'ledger_engine_unsupported'
    ? { status: 501, title: 'Not available on this ledger', line }
    : { status: 503, title: 'Ledger unavailable', line };
}

/** Only a path on this console (never `//host` or a scheme) may follow the login. */
function safeNext(next: string | null): string {
  return next !== null && /^\/(?![/\\])[^\s]*$/.test(next) ? next : '/sessions';
}

function serveAsset(res: ServerResponse, name: string, method: string): void {
  const type = ASSETS[name];
  const file = join(assetsDir, name);
  if (!type || (method !== 'GET' && method !== 'HEAD')) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  if (!existsSync(file)) {
    return send(res, 500, 'text/plain; charset=utf-8', `console assets missing at ${assetsDir}: run npm run build\n`);
  }
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-cache' });
  if (method === 'HEAD') return void res.end();
  createReadStream(file).pipe(res);
}

function html(res: ServerResponse, status: number, body: string): void {
  send(res, status, 'text/html; charset=utf-8', body, { 'cache-control': 'no-store' });
}

function send(res: ServerResponse, status: number, type: string, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}, status = 303): void {
  res.writeHead(status, { ...SECURITY_HEADERS, location, 'cache-control': 'no-store', ...headers });
  res.end();
}

/** A urlencoded form body, or null when it is too large or not a form. */
async function readForm(req: IncomingMessage, maxBytes: number): Promise<URLSearchParams | null> {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) return null;
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return null;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
