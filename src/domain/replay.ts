import type { Outcome } from './outcomes.js';
import type { Decision } from './results.js';

/** Replay's vocabulary (docs/design.md §7), shared by the replay engine, the ledger's replay store and the reports. */

/**
 * How a replayed invocation's decision compares with the one it is measured against (the
 * recorded decision, or the baseline replay's with `--baseline`). One kind per invocation,
 * the most important first: a decision change beats a decisive-hook change, which beats a
 * reason change, a different modified input, and a newly failing fail-open hook.
 */
export const CHANGE_KINDS = [
  'unchanged',
  'newly_denied',
  'newly_allowed',
  'now_asks',
  'other_hook',
  'other_reason',
  'modified_differently',
  'failed',
] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

/**
 * How one hook's outcome changed. `new`/`removed`: the hook matched on one side only (added
 * to or dropped from the hook set, or its matcher or point changed).
 */
export const HOOK_CHANGE_KINDS = [
  'new',
  'removed',
  'now_timing_out',
  'now_failing',
  'no_longer_failing',
  'now_skipped',
  'no_longer_skipped',
  'decision',
  'now_decisive',
  'no_longer_decisive',
] as const;
export type HookChangeKind = (typeof HOOK_CHANGE_KINDS)[number];

/** The parts of a hook's outcome the diff compares. */
export interface HookState {
  status: string;
  /** What the hook returned (allow, deny, ask, modify, none), null when it did not return. */
  decision: string | null;
  decisive: boolean;
  reasonCode: string | null;
  failureReason: string | null;
}

export interface HookChange {
  hookId: string;
  kind: HookChangeKind;
  old: HookState | null;
  new: HookState | null;
}

/** An invocation-level decision, as recorded or as replayed. */
export interface DecisionState {
  decision: Decision;
  decisiveHookId: string | null;
  reasonCode: string | null;
  message: string | null;
  /** The final input as JSON text when a hook modified it, else null. */
  modifiedInputJson: string | null;
}

/** running (in progress, or its process died: see `pid`/`host`), completed, incomplete (stopped early; results so far kept). */
export const REPLAY_RUN_STATUSES = ['running', 'completed', 'incomplete'] as const;
export type ReplayRunStatus = (typeof REPLAY_RUN_STATUSES)[number];

/** Counts of one replay run. `replayed` is the sum of the change kinds. */
export interface ReplayTotals {
  /** Invocations the selection held when the run started. */
  selected: number;
  replayed: number;
  unchanged: number;
  newlyDenied: number;
  newlyAllowed: number;
  nowAsks: number;
  otherHook: number;
  otherReason: number;
  modifiedDifferently: number;
  failed: number;
  /** With a baseline: invocations whose recorded result the baseline did not reproduce. */
  baselineMismatches: number;
  /** Invocations recorded with redacted input (the replayed input is incomplete). */
  redacted: number;
}

/** The totals field for each change kind. */
export const TOTAL_FOR_CHANGE: Readonly<Record<ChangeKind, keyof ReplayTotals>> = {
  unchanged: 'unchanged',
  newly_denied: 'newlyDenied',
  newly_allowed: 'newlyAllowed',
  now_asks: 'nowAsks',
  other_hook: 'otherHook',
  other_reason: 'otherReason',
  modified_differently: 'modifiedDifferently',
  failed: 'failed',
};

export function emptyTotals(selected = 0): ReplayTotals {
  return {
    selected,
    replayed: 0,
    unchanged: 0,
    newlyDenied: 0,
    newlyAllowed: 0,
    nowAsks: 0,
    otherHook: 0,
    otherReason: 0,
    modifiedDifferently: 0,
    failed: 0,
    baselineMismatches: 0,
    redacted: 0,
  };
}

/**
 * What is stored (as JSON) with a result that is worth showing: a change, a baseline mismatch
 * or a warning. Unchanged results without warnings store nothing more than their row, which
 * keeps a 100,000-invocation replay small.
 */
export interface ReplayResultDetail {
  point?: string;
  sessionId?: string | null;
  toolName?: string | null;
  /** The agent that sent the event (`codex`, `gemini-cli` ...). */
  agent?: string | null;
  /** The original input on one line, cut to 160 characters. */
  input?: string;
  /** The decision compared against: the recording, or the baseline replay with `--baseline`. */
  old?: DecisionState;
  /** The replayed decision; absent when the invocation could not be replayed. */
  new?: DecisionState;
  hookChanges?: HookChange[];
  /** With a baseline that did not reproduce the recording: the recording, and how the baseline differed. */
  recorded?: DecisionState;
  baselineChange?: ChangeKind;
  baselineHookChanges?: HookChange[];
  warnings?: string[];
  /** Why the invocation could not be replayed (change kind `failed`). */
  error?: string;
  /** Every outcome of the replay under the new hook set, in execution order. */
  outcomes?: Outcome[];
}

/** One replayed invocation, as stored and shown. */
export interface ReplayResult extends ReplayResultDetail {
  invocationId: number;
  change: ChangeKind;
  oldDecision: Decision | null;
  newDecision: Decision | null;
  oldDecisiveHookId: string | null;
  newDecisiveHookId: string | null;
  baselineMismatch: boolean;
}
