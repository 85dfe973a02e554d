import type Database from 'better-sqlite3';
import type { RecorderOptions } from '../runner/recorder.js';
import { GroupCommitWriter } from './group-commit.js';
import type { Ledger, ReplayRunWriter, ReplaySourceReader } from './ledger.js';
import { openLedger as openSqliteFile, type Ledger as SqliteHandle, type OpenLedgerOptions } from './open.js';
import type { PruneOptions } from './prune.js';
import type { DenialGroupBy } from './queries/denials.js';
import type { ExportFormat } from './queries/export.js';
import type { InvocationFilter } from './queries/filters.js';
import type { HealthOptions } from './queries/health.js';
import type { HealthSeriesOptions } from './queries/health-series.js';
import type { PageRequest } from './queries/paging.js';
import type { ReplaySelection } from './queries/replay-source.js';
import type { ReplayStore } from './replay-store.js';
import type { VerifyOptions } from './verify.js';
import { LedgerWriter } from './write.js';

/**
 * The SQLite engine: the `Ledger` interface over one better-sqlite3 connection. Every method
 * delegates to the module that does the work (write.ts, queries/*, verify.ts, prune.ts, …);
 * this class adds only the engine-neutral shape. The query modules are imported on first use,
 * so the write path (`hookledger claude`, `hookledger run`) loads only open.ts and write.ts.
 *
 * It is also the `SqliteHandle` those modules take (`path`, `sqlite`), so SQLite-only
 * tools and tests can still call them directly.
 */
export class SqliteLedger implements Ledger, SqliteHandle {
  readonly engine = 'sqlite' as const;

  private constructor(private readonly handle: SqliteHandle) {}

  /** Opens (creating if needed) a SQLite ledger file, synchronously: see open.ts. */
  static open(options: OpenLedgerOptions): SqliteLedger {
    return new SqliteLedger(openSqliteFile(options));
  }

  /** The resolved file path (or `:memory:`). */
  get path(): string {
    return this.handle.path;
  }
  get location(): string {
    return this.handle.path;
  }
  /** The raw connection, for SQLite-only tools (prepared statements, tests). */
  get sqlite(): Database.Database {
    return this.handle.sqlite;
  }
  get recovered(): { invocations: number; outcomes: number } {
    return this.handle.recovered;
  }

  writer(options: RecorderOptions & { groupCommit: true | (() => boolean) }): GroupCommitWriter;
  writer(options?: RecorderOptions): LedgerWriter | GroupCommitWriter;
  writer(options: RecorderOptions = {}): LedgerWriter | GroupCommitWriter {
    const writer = new LedgerWriter(this.handle, options);
    const { groupCommit } = options;
    if (!groupCommit) return writer;
    return new GroupCommitWriter(writer, this.handle.sqlite, this.handle.path, groupCommit === true ? undefined : groupCommit);
  }

  async explain(ref: number | string) {
    return (await import('./queries/explain.js')).explain(this.handle, ref);
  }
  async listDenials(filter: InvocationFilter, page: PageRequest) {
    return (await import('./queries/denials.js')).listDenials(this.handle, filter, page);
  }
  async groupDenials(filter: InvocationFilter, groupBy: DenialGroupBy, options: { limit?: number } = {}) {
    return (await import('./queries/denials.js')).groupDenials(this.handle, filter, groupBy, options);
  }
  async listSessions(filter: InvocationFilter, page: PageRequest) {
    return (await import('./queries/sessions.js')).listSessions(this.handle, filter, page);
  }
  async sessionTimeline(sessionId: string, page: PageRequest, filter: InvocationFilter = {}) {
    return (await import('./queries/sessions.js')).sessionTimeline(this.handle, sessionId, page, filter);
  }
  async hookHealth(options: HealthOptions = {}) {
    return (await import('./queries/health.js')).hookHealth(this.handle, options);
  }
  async hookHealthSeries(options: HealthSeriesOptions) {
    return (await import('./queries/health-series.js')).hookHealthSeries(this.handle, options);
  }
  async hookSetsInForce(since: number, until: number) {
    return (await import('./queries/hook-sets.js')).hookSetsInForce(this.handle, since, until);
  }
  async *exportRecords(filter: InvocationFilter) {
    yield* (await import('./queries/export.js')).exportRecords(this.handle, filter);
  }
  async *exportText(filter: InvocationFilter, format: ExportFormat): AsyncGenerator<string> {
    // Each chunk is a batch of invocations (queries/export.ts), so the await is per batch, not per line.
    yield* (await import('./queries/export.js')).exportLines(this.handle, filter, format);
  }

  async replaySource(selection: ReplaySelection, batchSize?: number): Promise<ReplaySourceReader> {
    const { ReplaySource } = await import('./queries/replay-source.js');
    const source = new ReplaySource(this.handle, selection, batchSize);
    return {
      total: source.total,
      next: async () => source.next(),
      recordedOutcomes: async (ids) => source.recordedOutcomes(ids),
    };
  }
  replayRuns(): ReplayRunWriter {
    // Created on first use: most callers of replayRuns() write at once, and the store prepares its statements up front.
    let store: ReplayStore | undefined;
    const ready = async () => (store ??= new (await import('./replay-store.js')).ReplayStore(this.handle));
    return {
      startRun: async (run) => (await ready()).startRun(run),
      append: async (runId, records, totals) => (await ready()).append(runId, records, totals),
      finish: async (runId, status, totals, finishedAt) => (await ready()).finish(runId, status, totals, finishedAt),
    };
  }
  async listReplayRuns(options: { limit?: number } = {}) {
    return (await import('./queries/replay-runs.js')).listReplayRuns(this.handle, options);
  }
  async getReplayRun(runId: number) {
    return (await import('./queries/replay-runs.js')).getReplayRun(this.handle, runId);
  }
  async showReplayRun(runId: number, options: { limit?: number } = {}) {
    return (await import('./queries/replay-runs.js')).showReplayRun(this.handle, runId, options);
  }

  async chainHeads() {
    return (await import('./queries/chain-head.js')).chainHeads(this.handle);
  }
  async verify(options: VerifyOptions = {}) {
    return (await import('./verify.js')).verifyLedger(this.handle, options);
  }
  async prune(options: PruneOptions) {
    return (await import('./prune.js')).pruneLedger(this.handle, options);
  }
  async placeHold(sessionId: string, reason: string, heldBy?: string) {
    const { placeHold } = await import('./holds.js');
    return heldBy === undefined ? placeHold(this.handle, sessionId, reason) : placeHold(this.handle, sessionId, reason, heldBy);
  }
  async releaseHold(sessionId: string) {
    return (await import('./holds.js')).releaseHold(this.handle, sessionId);
  }
  async listHolds() {
    return (await import('./holds.js')).listHolds(this.handle);
  }

  /** Synchronous underneath; the Promise is the interface's (a network engine waits for its pool). */
  async close(): Promise<void> {
    this.handle.close();
  }
}
