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
  const ran = { ...outcome, executionOrder, startedAt: execution.startedAt, durationUs: execution.durationUs };
  if (!execution.ok) {
    return {
      ...ran,
      status: execution.failureReason === 'timeout' ? 'timed_out' : 'failed',
      failureReason: execution.failureReason,
      failureDetail: execution.detail,
    };
  }
  const r = execution.result;
  return {
    ...ran,
    status: 'completed',
    decision: r.decision,
    reasonCode: r.decision === 'deny' ? r.reasonCode : null,
    message:
      r.decision === 'deny' || r.decision === 'ask'
        ? r.message
        : r.decision === 'allow'
          ? (r.message ?? null)
          : r.decision === 'modify'
            ? (r.reason ?? null)
            : null,
    payload: r.decision === 'deny' ? (r.payload ?? null) : null,
    modifiedInput: replacementOf(r) ?? null,
    additionalContext: r.additionalContext ?? null,
  };
}

/** The deny a fail-closed failure turns into. */
export function failClosedMessage(hook: ResolvedHook, execution: Extract<HookExecution, { ok: false }>): string {
  return execution.failureReason === 'timeout'
    ? `hook "${hook.id}" timed out after ${hook.timeoutMs} ms and fails closed`
    : `hook "${hook.id}" failed (${execution.failureReason}: ${execution.detail}) and fails closed`;
}
