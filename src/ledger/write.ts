import type Database from 'better-sqlite3';
import { hostname } from 'node:os';
import { LedgerError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import { modifiableInput } from '../domain/invocation.js';
import type { Outcome, Report } from '../domain/outcomes.js';
import type { Ledger } from './open.js';
import { capText, MAX_HOOK_VALUE_BYTES, toJsonText } from './json-text.js';
import { describeSqliteError } from './sqlite-errors.js';

/** The final state of an invocation, committed with its outcomes. */
export type InvocationResult = Pick<
  Report,
  'decision' | 'decisiveHookId' | 'reasonCode' | 'message' | 'modifiedInput' | 'additionalContext' | 'durationUs'
>;

/**
 * The per-invocation write path. Every statement is prepared once per ledger: this runs
 * on every agent event, and rebuilding queries per call costs more than the writes.
 */
export class LedgerWriter {
  private readonly host = hostname();
  private readonly hookSetIds = new Map<string, number>();
  private readonly selectHookSet: Database.Statement<[string], number>;
  private readonly insertHookSet: Database.Statement;
  private readonly insertInvocation: Database.Statement;
  private readonly updateInvocation: Database.Statement;
  private readonly insertOutcome: Database.Statement;
  private readonly startOutcome: Database.Statement;
  private readonly completeOutcome: Database.Statement;
  private readonly commitFinal: (id: number, result: InvocationResult, finishedAt: number, outcomes: Outcome[]) => number[];

  constructor(private readonly ledger: Ledger) {
    const s = ledger.sqlite;
    this.selectHookSet = s.prepare('SELECT id FROM hook_sets WHERE fingerprint = ?').pluck() as Database.Statement<[string], number>;
    this.insertHookSet = s.prepare(
      `INSERT INTO hook_sets (fingerprint, name, version, strategy, definition_json, created_at)
       VALUES (@fingerprint, @name, @version, @strategy, @definitionJson, @createdAt) ON CONFLICT (fingerprint) DO NOTHING`,
    );
    this.insertInvocation = s.prepare(
      `INSERT INTO invocations (hook_set_id, point, event_name, session_id, turn, tool_name, tool_use_id, agent, cwd,
         input_json, invocation_json, raw_json, status, started_at, pid, host)
       VALUES (@hookSetId, @point, @eventName, @sessionId, @turn, @toolName, @toolUseId, @agent, @cwd,
         @inputJson, @invocationJson, @rawJson, 'running', @startedAt, @pid, @host)`,
    );
    this.updateInvocation = s.prepare(
      `UPDATE invocations SET status = 'completed', decision = @decision, decisive_hook_id = @decisiveHookId,
         reason_code = @reasonCode, message = @message, modified_input_json = @modifiedInputJson, context_json = @contextJson,
         finished_at = @finishedAt, duration_us = @durationUs
       WHERE id = @id`,
    );
    this.insertOutcome = s.prepare(
      `INSERT INTO outcomes (invocation_id, hook_id, point, priority, registration_index, execution_order, mode, capability,
         runtime, status, decision, decisive, reason_code, message, payload_json, modified_input_json, additional_context,
         failure_reason, failure_detail, skip_reason, skipped_by, timeout_ms, started_at, duration_us)
       VALUES (@invocationId, @hookId, @point, @priority, @registrationIndex, @executionOrder, @mode, @capability,
         @runtime, @status, @decision, @decisive, @reasonCode, @message, @payloadJson, @modifiedInputJson, @additionalContext,
         @failureReason, @failureDetail, @skipReason, @skippedBy, @timeoutMs, @startedAt, @durationUs)`,
    );
    this.startOutcome = s.prepare(`UPDATE outcomes SET started_at = ?, execution_order = ? WHERE id = ?`);
    this.completeOutcome = s.prepare(
      `UPDATE outcomes SET status = @status, decision = @decision, reason_code = @reasonCode, message = @message,
         payload_json = @payloadJson, modified_input_json = @modifiedInputJson, additional_context = @additionalContext,
         failure_reason = @failureReason, failure_detail = @failureDetail, skip_reason = @skipReason,
         started_at = coalesce(@startedAt, started_at), duration_us = @durationUs
       WHERE id = @id AND status = 'pending'`,
    );
    const commit = s.transaction((id: number, result: InvocationResult, finishedAt: number, outcomes: Outcome[]) => {
      this.updateInvocation.run({
        id,
        decision: result.decision,
        decisiveHookId: result.decisiveHookId,
        reasonCode: result.reasonCode,
        message: capText(result.message),
        modifiedInputJson: toJsonText(result.modifiedInput),
        contextJson: result.additionalContext.length > 0 ? JSON.stringify(result.additionalContext) : null,
        finishedAt,
        durationUs: result.durationUs,
      });
      const pendingIds: number[] = [];
      for (const outcome of outcomes) {
        const rowId = Number(this.insertOutcome.run(outcomeParams(id, outcome)).lastInsertRowid);
        if (outcome.status === 'pending') pendingIds.push(rowId);
      }
      return pendingIds;
    });
    // IMMEDIATE takes the write lock up front, so a busy ledger waits at BEGIN (under busy_timeout)
    // instead of failing with SQLITE_BUSY when a read lock cannot be upgraded.
    this.commitFinal = (...args) => commit.immediate(...args);
  }

  /** Returns the ledger id of a hook set, storing it on first use. */
  hookSetId(hookSet: HookSet): number {
    const cached = this.hookSetIds.get(hookSet.fingerprint);
    if (cached !== undefined) return cached;
    const id = this.guard('store the hook set', () => {
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
    return id;
  }

  /** Writes the invocation as `running` before any hook runs; returns its id. */
  begin(hookSetId: number, invocation: Invocation, startedAt: number): number {
    const { raw, ...canonical } = invocation;
    return this.guard('record the invocation', () =>
      Number(
        this.insertInvocation.run({
          hookSetId,
          point: invocation.point,
          eventName: invocation.eventName,
          sessionId: invocation.sessionId,
          turn: invocation.turn,
          toolName: invocation.toolName,
          toolUseId: invocation.toolUseId,
          agent: invocation.agent,
          cwd: invocation.cwd,
          inputJson: toJsonText(modifiableInput(invocation)),
          invocationJson: toJsonText(canonical)!,
          rawJson: toJsonText(raw),
          startedAt,
          pid: process.pid,
          host: this.host,
        }).lastInsertRowid,
      ),
    );
  }

  /**
   * Commits the final state and every outcome in one transaction. Background outcomes are
   * inserted `pending`; their row ids are returned in the order given, for `completeBackground`.
   */
  finish(invocationId: number, result: InvocationResult, outcomes: Outcome[]): number[] {
    return this.guard('commit the decision', () => this.commitFinal(invocationId, result, Date.now(), outcomes));
  }

  /** Marks a pending background outcome as started. */
  startBackground(outcomeRowId: number, startedAt: number, executionOrder: number): void {
    this.guard('record a background hook start', () => this.startOutcome.run(startedAt, executionOrder, outcomeRowId));
  }

  /** Completes a pending background outcome. */
  completeBackground(outcomeRowId: number, outcome: Outcome): void {
    this.guard('record a background hook outcome', () => {
      const p = outcomeParams(0, outcome);
      this.completeOutcome.run({
        id: outcomeRowId,
        status: p.status,
        decision: p.decision,
        reasonCode: p.reasonCode,
        message: p.message,
        payloadJson: p.payloadJson,
        modifiedInputJson: p.modifiedInputJson,
        additionalContext: p.additionalContext,
        failureReason: p.failureReason,
        failureDetail: p.failureDetail,
        skipReason: p.skipReason,
        startedAt: p.startedAt,
        durationUs: p.durationUs,
      });
    });
  }

  /** Runs a write, turning SQLite failures into one-line LedgerErrors that say what was being written. */
  private guard<T>(what: string, write: () => T): T {
    try {
      return write();
    } catch (error) {
      if (error instanceof LedgerError) throw error;
      throw new LedgerError('ledger_write_failed', `could not ${what} in ${this.ledger.path}: ${describeSqliteError(error)}`, {
        cause: error,
      });
    }
  }
}

function outcomeParams(invocationId: number, o: Outcome) {
  return {
    invocationId,
    hookId: o.hookId,
    point: o.point,
    priority: o.priority,
    registrationIndex: o.registrationIndex,
    executionOrder: o.executionOrder,
    mode: o.mode,
    capability: o.capability,
    runtime: o.runtime,
    status: o.status,
    decision: o.decision,
    decisive: o.decisive ? 1 : 0,
    reasonCode: o.reasonCode,
    message: capText(o.message),
    payloadJson: toJsonText(o.payload, MAX_HOOK_VALUE_BYTES),
    modifiedInputJson: toJsonText(o.modifiedInput),
    additionalContext: capText(o.additionalContext),
    failureReason: o.failureReason,
    failureDetail: capText(o.failureDetail, 4096),
    skipReason: o.skipReason,
    skippedBy: o.skippedBy,
    timeoutMs: o.timeoutMs,
    startedAt: o.startedAt,
    durationUs: o.durationUs,
  };
}
