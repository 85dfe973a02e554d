/**
 * The ledger as every caller sees it, whatever stores it. A storage engine is one
 * implementation of `Ledger` (SQLite: sqlite-ledger.ts; PostgreSQL: postgres/engine.ts), chosen
 * once by `openLedger`; nothing above this file asks which engine it has.
 */
import { describeThrown, LedgerError } from '../domain/errors.js';
import type { ReplayRunStatus, ReplayTotals } from '../domain/replay.js';
import type { RecordingLedger } from '../runner/recorder.js';
import { importModule } from '../runtimes/import-module.js';
import { displayUrl, isPostgresUrl } from './postgres/url.js';
import type { OpenLedgerOptions } from './open.js';
import type { PruneOptions, PruneReport } from './prune.js';
import type { DenialGroupBy, DenialGroups, DenialPage } from './queries/denials.js';
import type { Explanation } from './queries/explain.js';
import type { ExportFormat, ExportRecord } from './queries/export.js';
import type { InvocationFilter } from './queries/filters.js';
import type { ChainHead } from './queries/chain-head.js';
import type { HealthOptions, HealthReport } from './queries/health.js';
import type { HealthSeries, HealthSeriesOptions } from './queries/health-series.js';
import type { HookSetInForce } from './queries/hook-sets.js';
import type { PageRequest } from './queries/paging.js';
import type { ReplayRunDetail, ReplayRunSummary } from './queries/replay-runs.js';
import type { ReplayOutcomeRow, ReplaySelection, ReplaySourceRow } from './queries/replay-source.js';
import type { SessionPage, SessionTimeline } from './queries/sessions.js';
import type { LegalHold } from './holds.js';
import type { ReplayResultRecord, ReplayRunStart } from './replay-store.js';
import type { VerifyOptions, VerifyReport } from './verify.js';

/** The storage engines hookledger has. */
export type LedgerEngine = 'sqlite' | 'postgres';

/**
 * A replay selection bound to one ledger: its size, then its rows batch by batch in id order.
 * The id range is fixed when it is opened, so invocations recorded during the replay are not chased.
 */
export interface ReplaySourceReader {
  /** Invocations the selection holds (at most its `limit`). */
  readonly total: number;
  /** The next batch in id order; empty when the selection is exhausted. */
  next(): Promise<ReplaySourceRow[]>;
  /** The recorded outcomes of these invocations, grouped by invocation id, in storage order. */
  recordedOutcomes(ids: number[]): Promise<Map<number, ReplayOutcomeRow[]>>;
}

/** Writes replay runs and their results; never the live invocations and outcomes. */
export interface ReplayRunWriter {
  /** Records a new run `running` (first marking runs of dead processes on this host incomplete); returns its id. */
  startRun(run: ReplayRunStart): Promise<number>;
  /** Stores a batch of results in one transaction, with the run's totals so far. */
  append(runId: number, records: ReplayResultRecord[], totals: ReplayTotals): Promise<void>;
  /** Sets the run's final status and totals. */
  finish(runId: number, status: Exclude<ReplayRunStatus, 'running'>, totals: ReplayTotals, finishedAt?: number): Promise<void>;
}

/**
 * An open ledger. Every read and maintenance method returns a Promise (a network database
 * answers later); the write path (`writer()`, from the runner's `RecordingLedger`) may answer
 * synchronously, see runner/recorder.ts. Errors are the typed classes of domain/errors.ts:
 * LedgerError (cannot read or write), NotFoundError, InputError/UsageError (bad arguments,
 * named without CLI flags), IntegrityError.
 */
export interface Ledger extends RecordingLedger {
  /** Which engine this is (for messages and `--json` output, never for branching callers). */
  readonly engine: LedgerEngine;
  /** Where the ledger is, fit to print: a file path, or a URL without its password. */
  readonly location: string;
  /** What recovery did on open: work left `running`/`pending` by dead processes, marked interrupted. */
  readonly recovered: { invocations: number; outcomes: number };

  /** An invocation with its hook set and every outcome, by id or tool-use id. NotFoundError when absent. */
  explain(ref: number | string): Promise<Explanation>;
  /** Denied invocations, newest first, a page at a time. */
  listDenials(filter: InvocationFilter, page: PageRequest): Promise<DenialPage>;
  /** Denials counted per hook, tool, reason code, session or day. */
  groupDenials(filter: InvocationFilter, groupBy: DenialGroupBy, options?: { limit?: number }): Promise<DenialGroups>;
  /** Sessions, most recently active first, a page at a time. */
  listSessions(filter: InvocationFilter, page: PageRequest): Promise<SessionPage>;
  /** One session's invocations and outcomes in order. NotFoundError when the session has none. */
  sessionTimeline(sessionId: string, page: PageRequest, filter?: InvocationFilter): Promise<SessionTimeline>;
  /** Per-hook runs, failures and durations over a time window. */
  hookHealth(options?: HealthOptions): Promise<HealthReport>;
  /** Hook health over time: a window cut into buckets of whole hours, answered in one read (the console's charts). */
  hookHealthSeries(options: HealthSeriesOptions): Promise<HealthSeries>;
  /** The hook sets that decided the invocations started in [since, until), in order of first use (the audit report). */
  hookSetsInForce(since: number, until: number): Promise<HookSetInForce[]>;
  /** Every selected invocation with its outcomes, oldest first, streamed (memory stays flat). */
  exportRecords(filter: InvocationFilter): AsyncIterable<ExportRecord>;
  /**
   * The export as text, oldest first: JSON Lines, or CSV with its header line. Each chunk holds
   * whole lines (an engine may join many into one chunk); `writeChunks` sends them to a stream.
   */
  exportText(filter: InvocationFilter, format: ExportFormat): AsyncIterable<string>;

  /** Opens a replay selection (counts it and fixes its id range). */
  replaySource(selection: ReplaySelection, batchSize?: number): Promise<ReplaySourceReader>;
  /** A writer of replay runs. */
  replayRuns(): ReplayRunWriter;
  /** The most recent replay runs, newest first (default 20). */
  listReplayRuns(options?: { limit?: number }): Promise<ReplayRunSummary[]>;
  /** One replay run's summary. NotFoundError when absent. */
  getReplayRun(runId: number): Promise<ReplayRunSummary>;
  /** One replay run with its changes and baseline mismatches (`limit` caps each list). */
  showReplayRun(runId: number, options?: { limit?: number }): Promise<ReplayRunDetail>;

  /**
   * The head of every tamper-evidence chain, read now (not verified): one on SQLite, one per
   * writer on PostgreSQL (by writer id). Empty when nothing has been chained yet.
   */
  chainHeads(): Promise<ChainHead[]>;
  /** Walks the tamper-evidence chain; the report lists what does not match. */
  verify(options?: VerifyOptions): Promise<VerifyReport>;
  /** Removes invocations started before a cutoff, in batches, keeping held and in-progress sessions. */
  prune(options: PruneOptions): Promise<PruneReport>;
  /** Places (or updates the reason of) a legal hold on a session. */
  placeHold(sessionId: string, reason: string, heldBy?: string): Promise<LegalHold>;
  /** Releases a hold. NotFoundError when the session is not held. */
  releaseHold(sessionId: string): Promise<void>;
  /** Every hold, with the session's invocation count now. */
  listHolds(): Promise<LegalHold[]>;

  /** Closes the connection(s). Every committed write is already durable. */
  close(): Promise<void>;
}

/** SQLite: a file path (or `:memory:`) and the SQLite options. */
export type SqliteOpenOptions = OpenLedgerOptions;
/** PostgreSQL: a `postgres://` or `postgresql://` connection URL. */
export interface PostgresOpenOptions {
  url: string;
  /** Open without writing: no migrations, no recovery (readers: the console, the audit report). */
  readonly?: boolean;
}
/** Where the ledger is. A `path` that is a PostgreSQL URL (as `--db`/`HOOKLEDGER_DB` may hold) opens PostgreSQL. */
export type OpenOptions = SqliteOpenOptions | PostgresOpenOptions;

/** What `postgres/engine.ts` exports: the one entry point the seam calls. */
export interface PostgresEngineModule {
  openPostgresLedger(options: PostgresOpenOptions): Promise<Ledger>;
}

/** Whether a `--db` value names a PostgreSQL server rather than a file; and a URL fit to print (no password). */
export { isPostgresUrl, displayUrl as printableUrl } from './postgres/url.js';

/**
 * Opens a ledger, choosing its engine once: a PostgreSQL URL loads the PostgreSQL engine (only
 * then, so `hookledger claude` on SQLite never loads PostgreSQL code); anything else is a SQLite
 * file.
 *
 * PostgreSQL: `openLedger({ url: 'postgres://user@host:5432/db' })` (or `postgresql://`, or a
 * `path` holding such a URL, as `--db`/`HOOKLEDGER_DB` may). The URL goes to the driver as is, so
 * `sslmode`, `application_name`, `connect_timeout` and the other libpq parameters work; the
 * password comes from the URL, `PGPASSWORD` or `~/.pgpass` and never appears in `location`,
 * messages or errors. Opening connects, applies the schema migrations under an advisory lock
 * and marks the work of writers whose lease ran out `interrupted`; the engine's answers have the
 * same types and meaning as SQLite's (docs/postgres.md says what differs and what is not there yet).
 *
 * @example
 * const ledger = await openLedger({ url: process.env.HOOKLEDGER_DB! });
 * try {
 *   const page = await ledger.listDenials({ toolName: 'Bash' }, { limit: 20 });
 * } finally {
 *   await ledger.close();
 * }
 * @throws LedgerError with one line and no password: `ledger_open_failed` (unreachable server,
 *   wrong password, missing database, bad URL), `ledger_too_new`, `ledger_engine_unavailable`.
 */
export async function openLedger(options: OpenOptions): Promise<Ledger> {
  const url = 'url' in options ? options.url : isPostgresUrl(options.path) ? options.path : null;
  if (url === null) {
    const { SqliteLedger } = await import('./sqlite-ledger.js');
    return SqliteLedger.open(options as SqliteOpenOptions);
  }
  const engine = await loadPostgresEngine(url);
  return engine.openPostgresLedger({ url, ...(options.readonly ? { readonly: true } : {}) });
}

/** Where the compiled PostgreSQL engine is, from this module (dist/ledger/, src/ledger/ under tsx, or the claude bundle). */
function postgresEngineUrl(): string {
  const here = import.meta.url;
  // The claude bundle (dist/bundle/claude.cjs) sits beside dist/ledger/.
  return new URL(/\/bundle\/[^/]*$/.test(here) ? '../ledger/postgres/engine.js' : './postgres/engine.js', here).href;
}

/**
 * Loads the PostgreSQL engine module. A build without it (or without its driver) fails with one
 * line naming what is missing, not a module-resolution stack trace.
 * @internal exported for the test that pins the message
 */
export async function loadPostgresEngine(url: string, moduleUrl = postgresEngineUrl()): Promise<PostgresEngineModule> {
  let loaded: Record<string, unknown>;
  try {
    loaded = await importModule(moduleUrl);
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException)?.code === 'ERR_MODULE_NOT_FOUND' && String(error).includes('engine');
    throw new LedgerError(
      'ledger_engine_unavailable',
      missing
        ? `cannot open ${displayUrl(url)}: this hookledger has no PostgreSQL engine (${moduleUrl} is missing); use a SQLite file path, or a build with src/ledger/postgres/`
        : `cannot open ${displayUrl(url)}: the PostgreSQL engine failed to load: ${describeThrown(error)}`,
      { cause: error },
    );
  }
  if (typeof loaded.openPostgresLedger !== 'function') {
    throw new LedgerError('ledger_engine_unavailable', `cannot open ${displayUrl(url)}: ${moduleUrl} does not export openPostgresLedger`);
  }
  return loaded as unknown as PostgresEngineModule;
}
