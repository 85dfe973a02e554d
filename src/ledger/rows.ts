import type { Outcome } from '../domain/outcomes.js';
import { fromJsonText } from './json-text.js';
import type { hookSets, invocations, outcomes, pruneCheckpoints, replayResults, replayRuns } from './schema.js';

/**
 * A row of a drizzle table as better-sqlite3 returns it from `SELECT *`: snake_case columns,
 * drizzle's column types, booleans as the integers SQLite stores.
 */
export type StoredRow<T extends { $inferSelect: object }> = {
  [K in keyof T['$inferSelect'] as SnakeCase<K & string>]: T['$inferSelect'][K] extends boolean ? number : T['$inferSelect'][K];
};

/** A stored outcome row. */
export type OutcomeRow = StoredRow<typeof outcomes>;

/** A stored invocation row. */
export type InvocationRow = StoredRow<typeof invocations>;

/** A stored prune checkpoint row. */
export type PruneCheckpointRow = StoredRow<typeof pruneCheckpoints>;

/** A stored hook set row. */
export type HookSetRow = StoredRow<typeof hookSets>;

/** A stored replay run row. */
export type ReplayRunRow = StoredRow<typeof replayRuns>;

/** A stored replay result row. */
export type ReplayResultRow = StoredRow<typeof replayResults>;

type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S;

/** Column list that reads outcomes in execution order: ran hooks first, then skipped/pending by (priority, index). */
export const OUTCOME_ORDER = `execution_order IS NULL, execution_order, mode = 'background', priority, registration_index`;

/** Turns a stored outcome row back into the domain Outcome. */
export function outcomeFromRow(row: OutcomeRow): Outcome {
  return {
    hookId: row.hook_id,
    point: row.point,
    priority: row.priority,
    registrationIndex: row.registration_index,
    executionOrder: row.execution_order,
    mode: row.mode,
    capability: row.capability,
    runtime: row.runtime,
    status: row.status,
    decision: row.decision,
    decisive: row.decisive === 1,
    reasonCode: row.reason_code,
    message: row.message,
    payload: fromJsonText(row.payload_json),
    modifiedInput: fromJsonText(row.modified_input_json),
    additionalContext: row.additional_context,
    failureReason: row.failure_reason,
    failureDetail: row.failure_detail,
    skipReason: row.skip_reason,
    skippedBy: row.skipped_by,
    timeoutMs: row.timeout_ms,
    startedAt: row.started_at,
    durationUs: row.duration_us,
  };
}

/** The invocation-level fields every report shows (camelCase, typed by the schema). */
export type InvocationSummary = Pick<
  (typeof invocations)['$inferSelect'],
  | 'id'
  | 'point'
  | 'eventName'
  | 'sessionId'
  | 'turn'
  | 'toolName'
  | 'toolUseId'
  | 'agent'
  | 'cwd'
  | 'status'
  | 'decision'
  | 'decisiveHookId'
  | 'reasonCode'
  | 'message'
  | 'startedAt'
  | 'durationUs'
  | 'hookSetId'
>;

export function invocationSummaryFromRow(row: InvocationRow): InvocationSummary {
  return {
    id: row.id,
    point: row.point,
    eventName: row.event_name,
    sessionId: row.session_id,
    turn: row.turn,
    toolName: row.tool_name,
    toolUseId: row.tool_use_id,
    agent: row.agent,
    cwd: row.cwd,
    status: row.status,
    decision: row.decision,
    decisiveHookId: row.decisive_hook_id,
    reasonCode: row.reason_code,
    message: row.message,
    startedAt: row.started_at,
    durationUs: row.duration_us,
    hookSetId: row.hook_set_id,
  };
}
