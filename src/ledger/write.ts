import type Database from 'better-sqlite3';
import { hostname } from 'node:os';
import { LedgerError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import { modifiableInput, normaliseInvocation } from '../domain/invocation.js';
import type { Outcome, Report } from '../domain/outcomes.js';
import type { Point } from '../domain/points.js';
import type { Ledger } from './open.js';
import {
  CHAIN_ENCODING_V1,
  ChainAppender,
  INVOCATION_SELECT,
  invocationEntry,
  OUTCOME_SELECT,
  outcomeEntry,
  type RawRow,
} from './integrity.js';
import type { OutcomeRow } from './rows.js';
import type { invocations } from './schema.js';
import { checkpointerFor, type Checkpointer } from './checkpoint.js';
import { capText, MAX_HOOK_VALUE_BYTES, toJsonText } from './json-text.js';
import { Redactor } from './redact.js';
import { RollupKeeper } from './rollup-upkeep.js';
import { guardWrite } from './sqlite-errors.js';
import { inputPathOf, redactOutcome, storedDecision } from './stored-form.js';

/** The final state of an invocation, committed with its outcomes. */
export type InvocationResult = Pick<
  Report,
  'decision' | 'decisiveHookId' | 'reasonCode' | 'message' | 'modifiedInput' | 'additionalContext' | 'durationUs'
>;

export interface LedgerWriterOptions {
  /**
   * Append tamper-evidence chain links (default true). Only the integrity benchmark turns this
   * off, to measure what chaining costs: records written without links fail `verify`.
   * @internal
   */
  chain?: boolean;
  /**
   * The host recorded with each invocation (default: this machine's name). Tests and the ledger
   * generator record several hosts from one machine.
   * @internal
   */
  host?: string;
}

/** Redaction state carried from `begin` to `finish` of one invocation. @internal */
export interface PreparedBegin {
  redactor: Redactor;
  point: Point;
  paths: string[];
  /** The values `begin` bound, for the chain link's encoding of the row. */
  row: BeginParams;
}

/** What `finish` writes, redacted and encoded before its transaction. @internal */
export interface PreparedFinish {
  id: number;
  open: PreparedBegin | undefined;
  redactor: Redactor;
  final: FinalParams;
  rows: { outcome: Outcome; paths: string[] }[];
  outcomes: Outcome[];
  finishedAt: number;
}

/** An invocation row as drizzle types it (camelCase keys; the SQL names are their snake_case, see `columnName`). */
type InvocationColumns = typeof invocations.$inferSelect;

/**
 * The invocation columns `finish` sets, in bind order (with `status`, which becomes
 * `completed`). Every other column but `id` and `status` is bound by `begin`: a new column is
 * added to the schema (ledger/schema.ts) and given its value in `storedBegin`, or, when it is
 * known only at the end, also named here and given its value in `storedFinal`.
 */
const FINAL_COLUMNS = [
  'decision',
  'decisiveHookId',
  'reasonCode',
  'message',
  'modifiedInputJson',
  'contextJson',
  'redactionsJson',
  'finishedAt',
  'durationUs',
] as const satisfies readonly (keyof InvocationColumns)[];
type FinalColumn = (typeof FINAL_COLUMNS)[number];

/** The values `begin` binds: every invocation column but the id, the status and the final ones (`redactionsJson` is bound by both). */
export type BeginParams = Omit<InvocationColumns, 'id' | 'status' | Exclude<FinalColumn, 'redactionsJson'>>;

/** The values `finish` binds to the invocation row. */
export type FinalParams = { id: number } & Pick<InvocationColumns, FinalColumn>;

/**
 * `begin`'s columns in bind order: the keys of the row `storedBegin` builds, which the type
 * above makes complete. Read from a row built for the purpose (once, by the first writer), so
 * the list cannot drift from the type and a new column is named in no third place.
 */
let beginColumns: readonly (keyof BeginParams)[] | undefined;
function beginColumnList(): readonly (keyof BeginParams)[] {
  beginColumns ??= Object.keys(
    storedBegin(new Redactor(), 0, normaliseInvocation({ point: 'pre_tool_use' }), 0, '').row,
  ) as (keyof BeginParams)[];
  return beginColumns;
}

/** A drizzle key's SQL column name (the schema's convention; test/ledger/columns.test.ts checks it against drizzle). */
export function columnName(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/**
 * The per-invocation write path. Every statement is prepared once per ledger: this runs
 * on every agent event, and rebuilding queries per call costs more than the writes.
 *
 * Everything stored is redacted first (ledger/redact.ts, the hook set's `redact` rules); the
 * caller's objects are never mutated, so hooks see the original. Each committed record (an
 * invocation with its outcomes, a completed background outcome) gets a chain link in the same
 * IMMEDIATE transaction (ledger/integrity.ts).
 */
export class LedgerWriter {
  private readonly host: string;
  private readonly hookSetIds = new Map<string, number>();
  private readonly fingerprints = new Map<number, string>();
  private readonly redactors = new Map<number, Redactor>();
  private readonly defaultRedactor = new Redactor();
  private readonly open = new Map<number, PreparedBegin>();
  /** Redactor of each pending background outcome, by row id, until it completes. */
  private readonly pendingBackground = new Map<number, Redactor>();
  private readonly chained: boolean;
  private readonly appender: ChainAppender;
  private readonly checkpointer: Checkpointer;
  private readonly rollupKeeper: RollupKeeper;
  private readonly selectInvocationRow: Database.Statement<[number], RawRow>;
  private readonly selectOutcomeRow: Database.Statement<[number], RawRow>;
  private readonly commitBackground: (id: number, params: Record<string, unknown>) => void;
  private readonly selectHookSet: Database.Statement<[string], number>;
  private readonly insertHookSet: Database.Statement;
  private readonly beginColumns: readonly (keyof BeginParams)[];
  private readonly insertInvocation: Database.Statement;
  private readonly updateInvocation: Database.Statement;
  private readonly insertOutcome: Database.Statement;
  private readonly startOutcome: Database.Statement;
  private readonly completeOutcome: Database.Statement;
  private readonly commitFinal: (prepared: PreparedFinish) => number[];

  constructor(
    private readonly ledger: Ledger,
    options: LedgerWriterOptions = {},
  ) {
    const s = ledger.sqlite;
    this.host = options.host ?? hostname();
    this.chained = options.chain ?? true;
    this.appender = new ChainAppender(s);
    this.checkpointer = checkpointerFor(s, ledger.path);
    this.rollupKeeper = new RollupKeeper(ledger);
    this.selectInvocationRow = s.prepare(INVOCATION_SELECT).raw() as Database.Statement<[number], RawRow>;
    this.selectOutcomeRow = s.prepare(OUTCOME_SELECT).raw() as Database.Statement<[number], RawRow>;
    this.selectHookSet = s.prepare('SELECT id FROM hook_sets WHERE fingerprint = ?').pluck() as Database.Statement<[string], number>;
    this.insertHookSet = s.prepare(
      `INSERT INTO hook_sets (fingerprint, name, version, strategy, definition_json, created_at)
       VALUES (@fingerprint, @name, @version, @strategy, @definitionJson, @createdAt) ON CONFLICT (fingerprint) DO NOTHING`,
    );
    this.beginColumns = beginColumnList();
    this.insertInvocation = s.prepare(
      `INSERT INTO invocations (${this.beginColumns.map(columnName).join(', ')}, status)
       VALUES (${this.beginColumns.map(() => '?').join(', ')}, 'running')`,
    );
    this.updateInvocation = s.prepare(
      `UPDATE invocations SET status = 'completed', ${FINAL_COLUMNS.map((key) => `${columnName(key)} = ?`).join(', ')} WHERE id = ?`,
    );
    // The id is bound NULL (SQLite assigns it), so that one array serves the insert and the chain link.
    this.insertOutcome = s.prepare(
      `INSERT INTO outcomes (id, ${OUTCOME_INSERT_COLUMNS.join(', ')}) VALUES (?, ${OUTCOME_INSERT_COLUMNS.map(() => '?').join(', ')})`,
    );
    this.startOutcome = s.prepare(`UPDATE outcomes SET started_at = ?, execution_order = ? WHERE id = ?`);
    this.completeOutcome = s.prepare(
      `UPDATE outcomes SET status = @status, decision = @decision, reason_code = @reasonCode, message = @message,
         payload_json = @payloadJson, modified_input_json = @modifiedInputJson, additional_context = @additionalContext,
         failure_reason = @failureReason, failure_detail = @failureDetail, skip_reason = @skipReason,
         redactions_json = @redactionsJson, started_at = coalesce(@startedAt, started_at), duration_us = @durationUs
       WHERE id = @id AND status = 'pending'`,
    );
    const commit = s.transaction((prepared: PreparedFinish) => this.writeFinish(prepared));
    // Off the decision path (the caller already has its answer), so the row is simply read back.
    const background = s.transaction((id: number, params: Record<string, unknown>) => {
      if (this.completeOutcome.run(params).changes === 0) return;
      if (this.chained) this.appender.append('background', id, [outcomeEntry(this.selectOutcomeRow.get(id)!, false)]);
    });
    this.commitBackground = (id, params) => {
      this.checkpointer.beforeWrite();
      background.immediate(id, params);
      this.checkpointer.committed();
    };
    // IMMEDIATE takes the write lock up front, so a busy ledger waits at BEGIN (under busy_timeout)
    // instead of failing with SQLITE_BUSY when a read lock cannot be upgraded.
    this.commitFinal = (prepared) => {
      this.checkpointer.beforeWrite();
      const pendingIds = commit.immediate(prepared);
      this.committed();
      return pendingIds;
    };
  }

  /** Returns the ledger id of a hook set, storing it on first use. */
  hookSetId(hookSet: HookSet): number {
    const cached = this.hookSetIds.get(hookSet.fingerprint);
    if (cached !== undefined) return cached;
    // Validated when the hook set was resolved; compiled once here for every invocation.
    const redactor = hookSet.redact ? new Redactor(hookSet.redact) : this.defaultRedactor;
    const id = this.guard('store the hook set', () => {
      // Look first: an INSERT that hits the unique fingerprint still consumes an AUTOINCREMENT id.
      const existing = this.selectHookSet.get(hookSet.fingerprint);
      if (existing !== undefined) return existing;
      this.insertHookSet.run({
        fingerprint: hookSet.fingerprint,
        name: hookSet.name,
        version: hookSet.version,
        strategy: hookSet.strategy,
        definitionJson: hookSet.canonical,
        createdAt: Date.now(),
      });
      return this.selectHookSet.get(hookSet.fingerprint)!;
    });
    this.hookSetIds.set(hookSet.fingerprint, id);
    this.fingerprints.set(id, hookSet.fingerprint);
    this.redactors.set(id, redactor);
    return id;
  }

  /** Writes the invocation as `running` before any hook runs; returns its id. */
  begin(hookSetId: number, invocation: Invocation, startedAt: number): number {
    const prepared = this.prepareBegin(hookSetId, invocation, startedAt);
    this.beforeWrite();
    const id = this.guard('record the invocation', () => this.writeBegin(prepared));
    this.opened(id, prepared);
    return id;
  }

  /**
   * Commits the final state and every outcome in one transaction. Background outcomes are
   * inserted `pending`; their row ids are returned in the order given, for `completeBackground`.
   *
   * `finishedAt` (default now) is stored and covered by the chain link in the same commit: a
   * writer with its own clock (a synthetic history, an import) passes it here, because a row
   * changed after its link is exactly what `verify` reports as tampering.
   */
  finish(invocationId: number, result: InvocationResult, outcomes: Outcome[], finishedAt: number = Date.now()): number[] {
    try {
      return this.guard('commit the decision', () => {
        const prepared = this.prepareFinish(invocationId, result, outcomes, finishedAt);
        const pendingIds = this.commitFinal(prepared);
        this.finished(prepared, pendingIds);
        return pendingIds;
      });
    } finally {
      this.open.delete(invocationId);
    }
  }

  // The steps of begin and finish, apart so that a group commit (group-commit.ts) can run the
  // writes of several invocations in one transaction: prepare (redaction, encoding) before it,
  // write inside it, and change this writer's state only once it is committed.

  /** @internal begin, before its transaction: the redacted row. */
  prepareBegin(hookSetId: number, invocation: Invocation, startedAt: number): PreparedBegin {
    const redactor = this.redactors.get(hookSetId) ?? this.defaultRedactor;
    const { row, paths } = storedBegin(redactor, hookSetId, invocation, startedAt, this.host);
    return { redactor, point: invocation.point, paths, row };
  }

  /** @internal begin's write: the `running` row; its id. */
  writeBegin({ row }: PreparedBegin): number {
    const columns = this.beginColumns;
    const values: unknown[] = new Array(columns.length);
    for (let i = 0; i < columns.length; i++) values[i] = row[columns[i]!];
    return Number(this.insertInvocation.run(values).lastInsertRowid);
  }

  /** @internal begin, once committed: what finish needs of it. */
  opened(id: number, prepared: PreparedBegin): void {
    this.open.set(id, prepared);
  }

  /** @internal finish, before its transaction: the redacted final state and outcomes. */
  prepareFinish(id: number, result: InvocationResult, outcomes: Outcome[], finishedAt: number): PreparedFinish {
    const open = this.open.get(id);
    const redactor = open?.redactor ?? this.defaultRedactor;
    const { final, rows } = storedFinal(id, open, redactor, result, outcomes, finishedAt);
    return { id, open, redactor, final, rows, outcomes, finishedAt };
  }

  /**
   * @internal finish's writes, inside a transaction: the final state, the outcomes, the chain
   * link. Returns the row ids of the pending (background) outcomes, in the order given.
   */
  writeFinish({ id, open, final, rows, outcomes, finishedAt }: PreparedFinish): number[] {
    const values: unknown[] = new Array(FINAL_COLUMNS.length + 1);
    for (let i = 0; i < FINAL_COLUMNS.length; i++) values[i] = final[FINAL_COLUMNS[i]!];
    values[FINAL_COLUMNS.length] = id;
    const changes = this.updateInvocation.run(values).changes;
    if (changes !== 1)
      throw new LedgerError('ledger_write_failed', `invocation #${id} is not in ${this.ledger.path}; its decision cannot be committed`);
    const pendingIds: number[] = [];
    const entries = this.chained
      ? [invocationEntry(open ? invocationRow(open.row, final, this.fingerprintOf(open.row.hookSetId)) : this.selectInvocationRow.get(id)!)]
      : [];
    for (let i = 0; i < outcomes.length; i++) {
      const row = outcomeParams(id, rows[i]!.outcome, rows[i]!.paths);
      // One array for the insert (id NULL: SQLite assigns it) and, with the id filled in, the chain link.
      const values = outcomeValues(row, true);
      const rowId = Number(this.insertOutcome.run(values).lastInsertRowid);
      values[0] = rowId;
      if (this.chained) entries.push(outcomeEntry(values, row.status === 'pending'));
      if (outcomes[i]!.status === 'pending') pendingIds.push(rowId);
    }
    // Encoded from the values just bound (integrity.ts says why that equals what verify reads back).
    if (this.chained) this.appender.append('invocation', id, entries, finishedAt);
    return pendingIds;
  }

  /** @internal finish, once committed: the background outcomes' redaction; the invocation is no longer open. */
  finished({ id, redactor }: PreparedFinish, pendingIds: number[]): void {
    this.open.delete(id);
    for (const rowId of pendingIds) this.pendingBackground.set(rowId, redactor);
  }

  /** @internal finish failed: the invocation is no longer open. */
  forget(id: number): void {
    this.open.delete(id);
  }

  /** @internal before each write transaction: waits out a background checkpoint that holds the write lock (checkpoint.ts). */
  beforeWrite(): void {
    this.checkpointer.beforeWrite();
  }

  /** @internal after each commit of final states: checkpoint and rollup bookkeeping. */
  committed(): void {
    this.checkpointer.committed();
    this.rollupKeeper.committed();
  }

  /** Marks a pending background outcome as started. */
  startBackground(outcomeRowId: number, startedAt: number, executionOrder: number): void {
    this.guard('record a background hook start', () => this.startOutcome.run(startedAt, executionOrder, outcomeRowId));
  }

  /** Completes a pending background outcome. */
  completeBackground(outcomeRowId: number, outcome: Outcome): void {
    const redactor = this.pendingBackground.get(outcomeRowId) ?? this.defaultRedactor;
    this.pendingBackground.delete(outcomeRowId);
    this.guard('record a background hook outcome', () => {
      const r = redactOutcome(redactor, outcome, inputPathOf(outcome.point));
      const p = outcomeParams(0, r.outcome, r.paths);
      this.commitBackground(outcomeRowId, {
        id: outcomeRowId,
        status: p.status,
        decision: p.decision,
        reasonCode: p.reason_code,
        message: p.message,
        payloadJson: p.payload_json,
        modifiedInputJson: p.modified_input_json,
        additionalContext: p.additional_context,
        failureReason: p.failure_reason,
        failureDetail: p.failure_detail,
        skipReason: p.skip_reason,
        redactionsJson: p.redactions_json,
        startedAt: p.started_at,
        durationUs: p.duration_us,
      });
    });
  }

  /** The fingerprint the chain covers for a hook set id (a hook set stored by another writer is looked up once). */
  private fingerprintOf(hookSetId: number): string | null {
    let fingerprint = this.fingerprints.get(hookSetId);
    if (fingerprint === undefined) {
      fingerprint = this.ledger.sqlite.prepare('SELECT fingerprint FROM hook_sets WHERE id = ?').pluck().get(hookSetId) as
        string | undefined;
      if (fingerprint === undefined) return null;
      this.fingerprints.set(hookSetId, fingerprint);
    }
    return fingerprint;
  }

  /** Runs a write; SQLite failures become one-line LedgerErrors (sqlite-errors.ts). */
  private guard<T>(what: string, write: () => T): T {
    return guardWrite(this.ledger.path, what, write);
  }
}

/** The invocation row `begin` stores: redacted, JSON columns as text; and the paths redaction replaced. */
export function storedBegin(
  redactor: Redactor,
  hookSetId: number,
  invocation: Invocation,
  startedAt: number,
  host: string,
): { row: BeginParams; paths: string[] } {
  const redacted = redactor.redact(invocation);
  const stored = redacted.value;
  const { raw, ...canonical } = stored;
  const row: BeginParams = {
    hookSetId,
    point: stored.point,
    eventName: stored.eventName,
    sessionId: stored.sessionId,
    turn: stored.turn,
    toolName: stored.toolName,
    toolUseId: stored.toolUseId,
    agent: stored.agent,
    cwd: stored.cwd,
    inputJson: toJsonText(modifiableInput(stored)),
    invocationJson: toJsonText(canonical)!,
    rawJson: toJsonText(raw),
    redactionsJson: redacted.paths.length > 0 ? JSON.stringify(redacted.paths) : null,
    startedAt,
    pid: process.pid,
    host,
  };
  return { row, paths: redacted.paths };
}

/** The final state `finish` stores (redacted) and each outcome as stored, with its redaction paths. */
export function storedFinal(
  id: number,
  open: { point: Point; paths: string[] } | undefined,
  redactor: Redactor,
  result: InvocationResult,
  outcomes: Outcome[],
  finishedAt: number,
): { final: FinalParams; rows: { outcome: Outcome; paths: string[] }[] } {
  const paths = open ? [...open.paths] : [];
  const inputPath = inputPathOf(open?.point ?? 'pre_tool_use');
  const stored = storedDecision(redactor, open?.point ?? 'pre_tool_use', result);
  const context = redactor.redact(result.additionalContext, ['additionalContext']);
  paths.push(...stored.paths, ...context.paths);
  const rows = outcomes.map((outcome) => {
    const r = redactOutcome(redactor, outcome, inputPath);
    if (outcome.status !== 'pending') for (const p of r.paths) paths.push(`outcomes.${outcome.hookId}.${p}`);
    return r;
  });
  const final: FinalParams = {
    id,
    decision: result.decision,
    decisiveHookId: result.decisiveHookId,
    reasonCode: result.reasonCode,
    message: stored.message,
    modifiedInputJson: stored.modifiedInputJson,
    contextJson: context.value.length > 0 ? JSON.stringify(context.value) : null,
    redactionsJson: paths.length > 0 ? JSON.stringify(paths) : null,
    finishedAt,
    durationUs: result.durationUs,
  };
  return { final, rows };
}

/** Where each column of the chain's invocation encoding comes from: begin's row, finish's, or fixed (`id`, `status`). */
const CHAIN_INVOCATION_SOURCES = CHAIN_ENCODING_V1.invocation.map((name) => {
  const key = name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
  if (name === 'id' || name === 'status') return { from: name, key } as const;
  return { from: (FINAL_COLUMNS as readonly string[]).includes(key) ? 'final' : 'begin', key } as const;
});

/** The invocation row as `INVOCATION_SELECT` returns it (the chain's encoding), from the values bound by begin and finish. */
export function invocationRow(b: BeginParams, f: FinalParams, fingerprint: string | null): RawRow {
  const sources = CHAIN_INVOCATION_SOURCES;
  const values: unknown[] = new Array(sources.length + 1);
  for (let i = 0; i < sources.length; i++) {
    const { from, key } = sources[i]!;
    values[i] =
      from === 'final' ? f[key as FinalColumn] : from === 'begin' ? b[key as keyof BeginParams] : from === 'id' ? f.id : 'completed';
  }
  values[sources.length] = fingerprint;
  return values;
}

/**
 * The outcome columns the write path binds, in order: the chain's encoded outcome row without
 * its id (ledger/integrity.ts). One tuple for the insert and the chain link; a new column is
 * appended here and covered by the chain only in a new encoding version.
 */
const OUTCOME_INSERT_COLUMNS = CHAIN_ENCODING_V1.outcome.slice(1) as Exclude<(typeof CHAIN_ENCODING_V1.outcome)[number], 'id'>[];

type OutcomeInsert = Omit<OutcomeRow, 'id'>;

/**
 * The values bound to `insertOutcome`, positionally (binding by name costs about twice as much
 * in better-sqlite3). With the row id in front (`withId`: a NULL slot for it) this is the row as
 * `OUTCOME_SELECT` returns it.
 */
export function outcomeValues(row: OutcomeInsert, withId = false): RawRow {
  const offset = withId ? 1 : 0;
  const values: unknown[] = new Array(OUTCOME_INSERT_COLUMNS.length + offset);
  if (withId) values[0] = null;
  for (let i = 0; i < OUTCOME_INSERT_COLUMNS.length; i++) values[i + offset] = row[OUTCOME_INSERT_COLUMNS[i]!];
  return values;
}

/** An outcome as the ledger stores it: capped texts, JSON as text, `decisive` as 0/1. */
export function outcomeParams(invocationId: number, o: Outcome, redactions: string[] = []): OutcomeInsert {
  return {
    invocation_id: invocationId,
    hook_id: o.hookId,
    point: o.point,
    priority: o.priority,
    registration_index: o.registrationIndex,
    execution_order: o.executionOrder,
    mode: o.mode,
    capability: o.capability,
    runtime: o.runtime,
    status: o.status,
    decision: o.decision,
    decisive: o.decisive ? 1 : 0,
    reason_code: o.reasonCode,
    message: capText(o.message),
    payload_json: toJsonText(o.payload, MAX_HOOK_VALUE_BYTES),
    modified_input_json: toJsonText(o.modifiedInput),
    additional_context: capText(o.additionalContext),
    failure_reason: o.failureReason,
    failure_detail: capText(o.failureDetail, 4096),
    skip_reason: o.skipReason,
    skipped_by: o.skippedBy,
    redactions_json: redactions.length > 0 ? JSON.stringify(redactions) : null,
    timeout_ms: o.timeoutMs,
    started_at: o.startedAt,
    duration_us: o.durationUs,
  };
}

/** The SQL columns `begin` and `finish` bind to the invocation row (for the test that checks them against the schema). @internal */
export function invocationWriteColumns(): { begin: string[]; final: string[] } {
  return { begin: beginColumnList().map(columnName), final: FINAL_COLUMNS.map(columnName) };
}
