import type {
  Capability,
  FailureReason,
  InvocationStatus,
  Mode,
  Outcome,
  OutcomeStatus,
  RuntimeKind,
  SkipReason,
} from '../domain/outcomes.js';
import type { Point } from '../domain/points.js';
import type { Decision, ReasonCode, ReturnedDecision } from '../domain/results.js';
import { fromJsonText } from './json-text.js';
import type { invocations, outcomes } from './schema.js';

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

type SnakeCase<S extends string> = S extends `${infer H}${infer T}`
  ? `${H extends Lowercase<H> ? H : `_${Lowercase<H>}`}${SnakeCase<T>}`
  : S;

/** Column list that reads outcomes in execution order: ran hooks first, then skipped/pending by (priority, index). */
export const OUTCOME_ORDER = `execution_order IS NULL, execution_order, mode = 'background', priority, registration_index`;

/** Turns a stored outcome row back into the domain Outcome. */
export function outcomeFromRow(row: OutcomeRow): Outcome {
  return {
    hookId: row.hook_id,
    point: row.point as Point,
    priority: row.priority,
    registrationIndex: row.registration_index,
    executionOrder: row.execution_order,
    mode: row.mode as Mode,
    capability: row.capability as Capability,
    runtime: row.runtime as RuntimeKind,
    status: row.status as OutcomeStatus,
    decision: row.decision as ReturnedDecision | null,
    decisive: row.decisive === 1,
    reasonCode: row.reason_code as ReasonCode | null,
    message: row.message,
    payload: fromJsonText(row.payload_json),
    modifiedInput: fromJsonText(row.modified_input_json),
    additionalContext: row.additional_context,
    failureReason: row.failure_reason as FailureReason | null,
    failureDetail: row.failure_detail,
    skipReason: row.skip_reason as SkipReason | null,
    skippedBy: row.skipped_by,
    timeoutMs: row.timeout_ms,
    startedAt: row.started_at,
    durationUs: row.duration_us,
  };
}

/** The invocation-level fields every report shows. */
export interface InvocationSummary {
  id: number;
  point: Point;
  eventName: string | null;
  sessionId: string | null;
  turn: number | null;
  toolName: string | null;
  toolUseId: string | null;
  agent: string | null;
  cwd: string | null;
  status: InvocationStatus;
  decision: Decision | null;
  decisiveHookId: string | null;
  reasonCode: ReasonCode | null;
  message: string | null;
  startedAt: number;
  durationUs: number | null;
  hookSetId: number;
}

export function invocationSummaryFromRow(row: InvocationRow): InvocationSummary {
  return {
    id: row.id,
    point: row.point as Point,
    eventName: row.event_name,
    sessionId: row.session_id,
    turn: row.turn,
    toolName: row.tool_name,
    toolUseId: row.tool_use_id,
    agent: row.agent,
    cwd: row.cwd,
    status: row.status as InvocationStatus,
    decision: row.decision as Decision | null,
    decisiveHookId: row.decisive_hook_id,
    reasonCode: row.reason_code as ReasonCode | null,
    message: row.message,
    startedAt: row.started_at,
    durationUs: row.duration_us,
    hookSetId: row.hook_set_id,
  };
}
