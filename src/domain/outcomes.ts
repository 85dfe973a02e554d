import type { Point } from './points.js';
import type { Decision, ReasonCode, ReturnedDecision } from './results.js';

export const MODES = ['foreground', 'background'] as const;
export type Mode = (typeof MODES)[number];

export const CAPABILITIES = ['guardrail', 'observe'] as const;
export type Capability = (typeof CAPABILITIES)[number];

export const RUNTIMES = ['in_process', 'command', 'http', 'worker'] as const;
export type RuntimeKind = (typeof RUNTIMES)[number];

export const OUTCOME_STATUSES = ['completed', 'failed', 'timed_out', 'skipped', 'pending', 'interrupted'] as const;
export type OutcomeStatus = (typeof OUTCOME_STATUSES)[number];

export const FAILURE_REASONS = ['timeout', 'execution_failed', 'invalid_result', 'observe_only_violation'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/** Why a matched hook did not run. */
export const SKIP_REASONS = [
  /** a deny (deny_wins) or a first decision (first_decision_wins) ended the foreground pass */
  'pass_ended',
  /** background hooks are not started after a deny */
  'denied',
  /** the runner was closed before a queued background hook could start */
  'shutdown',
  /** replay runs without background hooks unless asked */
  'replay_without_background',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export const INVOCATION_STATUSES = ['running', 'completed', 'interrupted'] as const;
export type InvocationStatus = (typeof INVOCATION_STATUSES)[number];

/** The record of one hook for one invocation (docs/design.md §4). */
export interface Outcome {
  hookId: string;
  point: Point;
  priority: number;
  registrationIndex: number;
  /** 0-based position in which the hook ran (foreground order, then background); null when skipped. */
  executionOrder: number | null;
  mode: Mode;
  capability: Capability;
  runtime: RuntimeKind;
  status: OutcomeStatus;
  /** What the hook returned, when it returned something valid. */
  decision: ReturnedDecision | null;
  /** This outcome decided the invocation (or, for a fail-closed failure, its synthesized deny did). */
  decisive: boolean;
  reasonCode: ReasonCode | null;
  message: string | null;
  payload: unknown;
  /** The replacement input a `modify` returned. */
  modifiedInput: unknown;
  additionalContext: string | null;
  failureReason: FailureReason | null;
  /** Human-readable failure detail: the thrown message, exit code and stderr excerpt, validation issues, or the limit. */
  failureDetail: string | null;
  skipReason: SkipReason | null;
  /** The hook that ended the pass, for `pass_ended` / `denied` skips. */
  skippedBy: string | null;
  timeoutMs: number;
  /** ms since the epoch; null when skipped. */
  startedAt: number | null;
  /** µs; null when skipped or pending. */
  durationUs: number | null;
}

/** All outcomes of one invocation plus the merged decision (docs/design.md §1, "report"). */
export interface Report {
  invocationId: number;
  hookSet: { id: number; name: string; version: string; fingerprint: string };
  point: Point;
  decision: Decision;
  /** The hook whose outcome decided, or null for `none`. */
  decisiveHookId: string | null;
  reasonCode: ReasonCode | null;
  message: string | null;
  /** The input as the hooks finally left it, when any hook modified it; otherwise null. */
  modifiedInput: unknown;
  /** Context strings hooks supplied, in execution order. */
  additionalContext: string[];
  outcomes: Outcome[];
  startedAt: number;
  durationUs: number;
}
