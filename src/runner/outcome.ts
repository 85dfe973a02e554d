import type { ResolvedHook } from '../domain/hooks.js';
import type { Outcome } from '../domain/outcomes.js';
import type { Point } from '../domain/points.js';
import { replacementOf } from '../domain/results.js';
import type { HookExecution } from './execute-hook.js';
import type { Registration } from './select.js';

/** An outcome with only the hook's identity filled in. */
export function blankOutcome(registration: Registration, point: Point): Outcome {
  const { hook } = registration;
  return {
    hookId: hook.id,
    point,
    priority: hook.priority,
    registrationIndex: registration.registrationIndex,
    executionOrder: null,
    mode: hook.mode,
    capability: hook.capability,
    // An isolated in-process hook ran in a worker thread: the record says so.
    runtime: hook.runtime.kind === 'in_process' && hook.runtime.isolation === 'worker' ? 'worker' : hook.runtime.kind,
    status: 'pending',
    decision: null,
    decisive: false,
    reasonCode: null,
    message: null,
    payload: null,
    modifiedInput: null,
    additionalContext: null,
    failureReason: null,
    failureDetail: null,
    skipReason: null,
    skippedBy: null,
    timeoutMs: hook.timeoutMs,
    startedAt: null,
    durationUs: null,
  };
}

/** Fills an outcome from what the hook did; capability rules are applied by the caller. */
export function applyExecution(outcome: Outcome, execution: HookExecution, executionOrder: number): Outcome {
  return fillExecution({ ...outcome }, execution, executionOrder);
}

/**
 * `applyExecution` in place, for an outcome nobody else holds yet (the foreground pass's fresh
 * blank one): no copies on the decision path.
 */
export function fillExecution(outcome: Outcome, execution: HookExecution, executionOrder: number): Outcome {
  outcome.executionOrder = executionOrder;
  outcome.startedAt = execution.startedAt;
  outcome.durationUs = execution.durationUs;
  if (!execution.ok) {
    outcome.status = execution.failureReason === 'timeout' ? 'timed_out' : 'failed';
    outcome.failureReason = execution.failureReason;
    outcome.failureDetail = execution.detail;
    return outcome;
  }
  const r = execution.result;
  outcome.status = 'completed';
  outcome.decision = r.decision;
  outcome.reasonCode = r.decision === 'deny' ? r.reasonCode : null;
  outcome.message =
    r.decision === 'deny' || r.decision === 'ask'
      ? r.message
      : r.decision === 'allow'
        ? (r.message ?? null)
        : r.decision === 'modify'
          ? (r.reason ?? null)
          : null;
  outcome.payload = r.decision === 'deny' ? (r.payload ?? null) : null;
  outcome.modifiedInput = replacementOf(r) ?? null;
  outcome.additionalContext = r.additionalContext ?? null;
  return outcome;
}

/** The deny a fail-closed failure turns into. */
export function failClosedMessage(hook: ResolvedHook, execution: Extract<HookExecution, { ok: false }>): string {
  return execution.failureReason === 'timeout'
    ? `hook "${hook.id}" timed out after ${hook.timeoutMs} ms and fails closed`
    : `hook "${hook.id}" failed (${execution.failureReason}: ${execution.detail}) and fails closed`;
}
