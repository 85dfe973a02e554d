import type { Outcome } from '../domain/outcomes.js';
import type { ChangeKind, DecisionState, HookChange, HookChangeKind, HookState } from '../domain/replay.js';
import type { Decision } from '../domain/results.js';

const FAILED = (status: string) => status === 'failed' || status === 'timed_out';

/** The recorded decision cannot be `null` for a completed invocation; treat a missing one as `none`. */
export function asDecision(value: string | null): Decision {
  return value === 'allow' || value === 'deny' || value === 'ask' ? value : 'none';
}

/** The state of a replayed outcome, in the shape the diff compares. */
export function hookStateOf(outcome: Outcome): HookState {
  return {
    status: outcome.status,
    decision: outcome.decision,
    decisive: outcome.decisive,
    reasonCode: outcome.reasonCode,
    failureReason: outcome.failureReason,
  };
}

/**
 * Compares per-hook outcomes, by hook id, in the order of `next` (then hooks only in `prev`).
 * Hooks with identical states produce nothing, so the common case costs one pass of
 * string comparisons.
 */
export function diffHooks(prevIds: string[], prev: HookState[], nextIds: string[], next: HookState[]): HookChange[] {
  const changes: HookChange[] = [];
  // Small lists (a handful of hooks): a linear search beats building a Map per invocation.
  const seen = new Array<boolean>(prevIds.length).fill(false);
  for (let n = 0; n < nextIds.length; n++) {
    const id = nextIds[n]!;
    const after = next[n]!;
    const p = prevIds.indexOf(id);
    if (p === -1) {
      changes.push({ hookId: id, kind: 'new', old: null, new: after });
      continue;
    }
    seen[p] = true;
    const before = prev[p]!;
    const kind = hookChangeKind(before, after);
    if (kind !== null) changes.push({ hookId: id, kind, old: before, new: after });
  }
  for (let p = 0; p < prevIds.length; p++) {
    if (!seen[p]) changes.push({ hookId: prevIds[p]!, kind: 'removed', old: prev[p]!, new: null });
  }
  return changes;
}

function hookChangeKind(before: HookState, after: HookState): HookChangeKind | null {
  if (
    before.status === after.status &&
    before.decision === after.decision &&
    before.decisive === after.decisive &&
    before.reasonCode === after.reasonCode &&
    before.failureReason === after.failureReason
  ) {
    return null;
  }
  if (after.status === 'timed_out' && before.status !== 'timed_out') return 'now_timing_out';
  if (after.status === 'failed' && before.status !== 'failed') return 'now_failing';
  if (FAILED(before.status) && !FAILED(after.status)) return after.status === 'skipped' ? 'now_skipped' : 'no_longer_failing';
  if (after.status === 'skipped' && before.status !== 'skipped') return 'now_skipped';
  if (before.status === 'skipped' && after.status !== 'skipped') return 'no_longer_skipped';
  if (before.decision !== after.decision || before.reasonCode !== after.reasonCode || before.failureReason !== after.failureReason) {
    return 'decision';
  }
  if (before.decisive !== after.decisive) return after.decisive ? 'now_decisive' : 'no_longer_decisive';
  // Same status, decision and reason: another status transition (pending, interrupted).
  return 'decision';
}

/**
 * The change kind of one invocation. `hookChanges` only decides between `failed` and
 * `unchanged` once the decision, decisive hook, reason and modified input all agree: a hook
 * that now fails or times out (or a new hook that does) without changing the decision is
 * still worth a look, because it fails open.
 */
export function classify(prev: DecisionState, next: DecisionState, hookChanges: HookChange[]): ChangeKind {
  if (prev.decision !== next.decision) {
    if (next.decision === 'deny') return 'newly_denied';
    if (next.decision === 'ask') return 'now_asks';
    if (prev.decision === 'deny' || prev.decision === 'ask') return 'newly_allowed';
    // allow <-> none: the agent proceeds either way; what changed is who (if anyone) decided.
    return prev.decisiveHookId !== next.decisiveHookId ? 'other_hook' : 'other_reason';
  }
  if (prev.decisiveHookId !== next.decisiveHookId) return 'other_hook';
  if (prev.reasonCode !== next.reasonCode || prev.message !== next.message) return 'other_reason';
  if (prev.modifiedInputJson !== next.modifiedInputJson) return 'modified_differently';
  for (const change of hookChanges) {
    if (change.kind === 'now_failing' || change.kind === 'now_timing_out') return 'failed';
    if (change.kind === 'new' && FAILED(change.new!.status)) return 'failed';
  }
  return 'unchanged';
}
