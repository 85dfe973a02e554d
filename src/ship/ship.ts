import { hostname } from 'node:os';
import type pg from 'pg';
import { HookledgerError, LedgerError } from '../domain/errors.js';
import type { Ledger as SqliteHandle } from '../ledger/open.js';
import { connectPostgres, type PostgresConnection } from '../ledger/postgres/open.js';
import { describePgError } from '../ledger/postgres/errors.js';
import { displayUrl } from '../ledger/postgres/url.js';
import {
  addCounts,
  registerSource,
  shipBatch,
  shipHolds,
  shipHookSets,
  shipInterrupted,
  shippedPending,
  tryLockSource,
  zeroCounts,
  type ShipCounts,
  type ShippedHead,
} from '../ledger/postgres/ship-sink.js';
import { localHead, readHolds, readHookSets, readInterrupted, sourceIdOf } from '../ledger/ship-source.js';
import { BatchPrefetch } from './prefetch.js';
import { isTransient } from './retry.js';

/**
 * `hookledger ship`: copies a SQLite ledger's committed records into a central PostgreSQL
 * ledger, exactly once (docs/ship.md). The work is a loop of batches (central.ts); this module
 * adds the connection, the per-source lock, waiting out a centre that is down, and follow mode.
 */

export interface ShipOptions {
  /** The local (SQLite) ledger, open. */
  ledger: SqliteHandle;
  /** The central ledger's `postgres://` URL. */
  url: string;
  /** Links per batch (one PostgreSQL transaction each). Default 5000 (docs/ship.md, "Batch size"). */
  batchSize?: number;
  /**
   * How long to keep retrying while the centre cannot be reached, ms; then fail. Default 120000;
   * `Infinity` in follow mode by default.
   */
  retryForMs?: number;
  /** Keep running: ship new records as they commit (checked every `pollMs`). */
  follow?: boolean;
  /** Follow mode: how often the ledger is checked for new records, ms. Default 200. */
  pollMs?: number;
  /** Stops follow mode (and any wait) at the next batch boundary. */
  signal?: AbortSignal;
  /** One-line notices: the centre is unreachable and when the next try is, another ship holds the source. */
  notice?: (line: string) => void;
  /** After every committed batch. */
  progress?: (state: ShipProgress) => void;
  /** The host name recorded for the source. Default the machine's. */
  host?: string;
}

export interface ShipProgress {
  shipped: ShipCounts;
  head: ShippedHead;
  /** The ledger's newest link: `localHead - head.seq` links remain (fewer where the ledger pruned). */
  localHead: number;
}

/** What `ship` did. Counts are what this run committed (a batch whose commit was cut off is counted by the run that finds it shipped: never). */
export interface ShipReport {
  source: string;
  host: string;
  /** The central ledger, without its password. */
  to: string;
  shipped: ShipCounts;
  /** The source's head at the centre when the run ended. */
  head: ShippedHead;
  localHead: number;
  /** Times the centre could not be reached and the run waited. */
  retries: number;
  durationMs: number;
}

const BACKOFF_FIRST_MS = 250;
const BACKOFF_MAX_MS = 10_000;

/** Ships until nothing is left (or, in follow mode, until `signal` aborts). Throws LedgerError (exit 3) when the centre or the ledger refuses. */
export async function ship(options: ShipOptions): Promise<ShipReport> {
  const started = Date.now();
  const host = options.host ?? hostname();
  const source = sourceIdOf(options.ledger);
  const to = displayUrl(options.url);
  const batchSize = options.batchSize ?? 5000;
  const retryForMs = options.retryForMs ?? (options.follow ? Infinity : 120_000);
  const shipped = zeroCounts();
  let retries = 0;
  let failingSince: number | null = null;
  let backoff = BACKOFF_FIRST_MS;
  const aborted = () => options.signal?.aborted === true;

  for (;;) {
    let connection: PostgresConnection | null = null;
    let client: pg.PoolClient | null = null;
    try {
      connection = await connectPostgres({ url: options.url, poolSize: 1 });
      client = await connection.pool.connect();
      // A server that goes away while this connection is checked out emits 'error' on it; the query in flight fails too, and is what is retried.
      client.on('error', () => undefined);
      await lockSource(client, source, options, aborted);
      let head = await registerSource(client, source, host);
      checkNotBehind(options.ledger, head, source);
      addCounts(shipped, { ...zeroCounts(), holds: await shipHolds(client, readHolds(options.ledger)) });
      shipped.hookSets += await shipHookSets(client, source, readHookSets(options.ledger));
      failingSince = null;
      backoff = BACKOFF_FIRST_MS;
      // Batches until the ledger has nothing more; in follow mode, wait for the next commit.
      const prefetch = new BatchPrefetch(options.ledger, batchSize, source);
      for (;;) {
        const result = await shipBatch(client, source, async (after) => {
          const batch = await prefetch.take(after);
          // The next batch is read while the centre writes this one.
          if (batch.span) prefetch.start(batch.span.lastSeq);
          return batch;
        });
        if (result) {
          addCounts(shipped, result.counts);
          head = result.head;
          options.progress?.({ shipped: { ...shipped }, head, localHead: localHead(options.ledger) });
          if (!aborted()) continue;
        }
        // Caught up: what recovery changed since without a link (background hooks of dead processes).
        shipped.interrupted += await shipInterrupted(client, source, readInterrupted(options.ledger, await shippedPending(client, source)));
        if (!options.follow || aborted()) break;
        await waitForCommit(options.ledger, head.seq, options.pollMs ?? 200, options.signal);
        if (aborted()) break;
        addCounts(shipped, { ...zeroCounts(), holds: await shipHolds(client, readHolds(options.ledger)) });
      }
      return { source, host, to, shipped, head, localHead: localHead(options.ledger), retries, durationMs: Date.now() - started };
    } catch (error) {
      if (!isTransient(error)) throw asShipError(error, to);
      failingSince ??= Date.now();
      if (aborted() || Date.now() - failingSince >= retryForMs)
        throw new LedgerError(
          'ledger_ship_unreachable',
          `cannot ship to ${to}: ${describePgError(rootCause(error))}; gave up after ${Math.round((Date.now() - failingSince) / 1000)} s`,
          {
            cause: error,
          },
        );
      retries++;
      options.notice?.(`cannot reach ${to} (${describePgError(rootCause(error))}); retrying in ${formatSeconds(backoff)}`);
      await sleep(backoff, options.signal);
      backoff = Math.min(BACKOFF_MAX_MS, backoff * 2);
    } finally {
      client?.release(true);
      await connection?.close().catch(() => undefined);
    }
  }
}

/** Holds the source's session lock (ship-sink.ts): a second ship for the source says so once, waits, then ships what is left. */
async function lockSource(client: pg.PoolClient, source: string, options: ShipOptions, aborted: () => boolean): Promise<void> {
  let told = false;
  for (;;) {
    const got = await tryLockSource(client, source);
    if (got || aborted()) return;
    if (!told) options.notice?.(`another ship for source ${source} is running; waiting for it`);
    told = true;
    await sleep(200, options.signal);
  }
}

/** The centre cannot hold more of this source than the ledger has: a ledger restored from an older copy would ship links that do not follow. */
function checkNotBehind(ledger: SqliteHandle, head: ShippedHead, source: string): void {
  const local = localHead(ledger);
  if (local < head.seq)
    throw new LedgerError(
      'ledger_ship_diverged',
      `the centre holds links up to ${head.seq} of source ${source}, but ${ledger.path} ends at link ${local}: the ledger was replaced or restored from an older copy`,
    );
}

async function waitForCommit(ledger: SqliteHandle, after: number, pollMs: number, signal: AbortSignal | undefined): Promise<void> {
  while (localHead(ledger) <= after && !signal?.aborted) await sleep(pollMs, signal);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function rootCause(error: unknown): unknown {
  return error instanceof LedgerError && error.cause !== undefined ? error.cause : error;
}

/** A failure that retrying will not fix, as one line naming the centre without its password. */
function asShipError(error: unknown, to: string): Error {
  if (error instanceof HookledgerError) return error;
  return new LedgerError('ledger_ship_failed', `cannot ship to ${to}: ${describePgError(error)}`, { cause: error });
}

const formatSeconds = (ms: number) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`);
