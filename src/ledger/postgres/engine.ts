import { LedgerError } from '../../domain/errors.js';
import type { RecorderOptions } from '../../runner/recorder.js';
import type { Ledger, PostgresOpenOptions, ReplayRunWriter, ReplaySourceReader } from '../ledger.js';
import type { LegalHold } from '../holds.js';
import type { PruneOptions, PruneReport } from '../prune.js';
import type { DenialGroupBy, DenialGroups, DenialPage } from '../queries/denials.js';
import type { ExportFormat, ExportRecord } from '../queries/export.js';
import type { InvocationFilter } from '../queries/filters.js';
import type { HealthOptions, HealthReport } from '../queries/health.js';
import type { HealthSeriesOptions } from '../queries/health-series.js';
import type { PageRequest } from '../queries/paging.js';
import type { ReplayRunDetail, ReplayRunSummary } from '../queries/replay-runs.js';
import type { ReplaySelection } from '../queries/replay-source.js';
import type { SessionPage, SessionTimeline } from '../queries/sessions.js';
import type { VerifyOptions } from '../verify.js';
import { PostgresStore, type PostgresStoreOptions } from './store.js';
import type { PostgresRecorder } from './write.js';

/**
 * The PostgreSQL engine: the `Ledger` interface over a `PostgresStore` (pool, migrations,
 * recovery, this process's writer lease). Like the SQLite engine it only delegates: each
 * method calls the module under postgres/ that does the work, imported on first use so the
 * write path (`hookledger claude`) loads only the store and the recorder.
 */
export class PostgresLedger implements Ledger {
  readonly engine = 'postgres' as const;

  private constructor(private readonly store: PostgresStore) {}

  /** Connects, migrates, recovers: see PostgresStore.open. */
  static async open(options: PostgresStoreOptions): Promise<PostgresLedger> {
    return new PostgresLedger(await PostgresStore.open(options));
  }

  /** The URL without its password. */
  get location(): string {
    return this.store.connection.displayUrl;
  }
  get recovered(): { invocations: number; outcomes: number } {
    return this.store.recovered;
  }
  private get pool() {
    return this.store.connection.pool;
  }

  writer(options: RecorderOptions = {}): PostgresRecorder {
    return this.store.writer(options);
  }

  async explain(ref: number | string) {
    return (await import('./queries/explain.js')).explainPostgres(this.pool, this.location, ref);
  }
  async listDenials(filter: InvocationFilter, page: PageRequest): Promise<DenialPage> {
    return (await import('./queries/denials.js')).listDenialsPostgres(this.pool, filter, page);
  }
  async groupDenials(filter: InvocationFilter, groupBy: DenialGroupBy, options: { limit?: number } = {}): Promise<DenialGroups> {
    return (await import('./queries/denials.js')).groupDenialsPostgres(this.pool, filter, groupBy, options);
  }
  async listSessions(filter: InvocationFilter, page: PageRequest): Promise<SessionPage> {
    return (await import('./queries/sessions.js')).listSessionsPostgres(this.pool, filter, page);
  }
  async sessionTimeline(sessionId: string, page: PageRequest, filter: InvocationFilter = {}): Promise<SessionTimeline> {
    return (await import('./queries/sessions.js')).sessionTimelinePostgres(this.pool, this.location, sessionId, page, filter);
  }

  // pgops: hook health, export, replay.
  async hookHealth(options: HealthOptions = {}): Promise<HealthReport> {
    return (await import('./queries/health.js')).hookHealthPostgres(this.pool, this.location, options);
  }
  async hookHealthSeries(options: HealthSeriesOptions) {
    return (await import('./queries/health-buckets.js')).hookHealthSeriesPostgres(this.pool, options);
  }
  async hookSetsInForce(since: number, until: number) {
    return (await import('./queries/hook-sets.js')).hookSetsInForcePostgres(this.pool, since, until);
  }
  async *exportRecords(filter: InvocationFilter): AsyncGenerator<ExportRecord> {
    yield* (await import('./queries/export.js')).exportRecordsPostgres(this.pool, this.location, filter);
  }
  async *exportText(filter: InvocationFilter, format: ExportFormat): AsyncGenerator<string> {
    yield* (await import('./queries/export.js')).exportTextPostgres(this.pool, this.location, filter, format);
  }
  async replaySource(selection: ReplaySelection, batchSize?: number): Promise<ReplaySourceReader> {
    return (await import('./queries/replay-source.js')).openReplaySourcePostgres(this.pool, this.location, selection, batchSize);
  }
  replayRuns(): ReplayRunWriter {
    // Hook sets are stored through this engine's recorder (one cache of ids), as the SQLite store uses its writer.
    const recorder = this.writer();
    let store: ReplayRunWriter | undefined;
    const ready = async () => (store ??= new (await import('./replay-store.js')).PostgresReplayStore(this.pool, this.location, recorder));
    return {
      startRun: async (run) => (await ready()).startRun(run),
      append: async (runId, records, totals) => (await ready()).append(runId, records, totals),
      finish: async (runId, status, totals, finishedAt) => (await ready()).finish(runId, status, totals, finishedAt),
    };
  }
  async listReplayRuns(options: { limit?: number } = {}): Promise<ReplayRunSummary[]> {
    return (await import('./queries/replay-runs.js')).listReplayRunsPostgres(this.pool, this.location, options);
  }
  async getReplayRun(runId: number): Promise<ReplayRunSummary> {
    return (await import('./queries/replay-runs.js')).getReplayRunPostgres(this.pool, this.location, runId);
  }
  async showReplayRun(runId: number, options: { limit?: number } = {}): Promise<ReplayRunDetail> {
    return (await import('./queries/replay-runs.js')).showReplayRunPostgres(this.pool, this.location, runId, options);
  }

  async chainHeads() {
    return (await import('./queries/chain-head.js')).chainHeadsPostgres(this.pool);
  }
  async verify(options: VerifyOptions = {}) {
    // An anchor is one chain head; here every writer has its own chain.
    if (options.anchor)
      throw new LedgerError('ledger_engine_unsupported', 'verify --anchor is not supported on PostgreSQL (one chain per writer)');
    const { anchor: _anchor, ...rest } = options;
    return (await import('./verify.js')).verifyPostgres(this.pool, this.location, rest);
  }

  // pgfaults: prune and legal holds.
  async prune(options: PruneOptions): Promise<PruneReport> {
    return (await import('./prune.js')).prunePostgres(this.store, options);
  }
  async placeHold(sessionId: string, reason: string, heldBy?: string): Promise<LegalHold> {
    return (await import('./holds.js')).placeHoldPostgres(this.pool, this.location, sessionId, reason, heldBy);
  }
  async releaseHold(sessionId: string): Promise<void> {
    return (await import('./holds.js')).releaseHoldPostgres(this.pool, this.location, sessionId);
  }
  async listHolds(): Promise<LegalHold[]> {
    return (await import('./holds.js')).listHoldsPostgres(this.pool, this.location);
  }

  async close(): Promise<void> {
    await this.store.close();
  }
}

/**
 * Opens a PostgreSQL ledger: the entry point `openLedger` (ledger.ts) loads for a
 * `postgres://` or `postgresql://` URL. Throws LedgerError with one line (no password) when the
 * server cannot be reached, refuses the credentials, or the schema cannot be brought up to date.
 */
export async function openPostgresLedger(options: PostgresOpenOptions): Promise<Ledger> {
  return PostgresLedger.open({ url: options.url, ...(options.readonly ? { readonly: true } : {}) });
}
