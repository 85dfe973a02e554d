import type { Strategy } from '../domain/hooks.js';
import { modifiableInput, modifyProblem, withModifiedInput, type Invocation } from '../domain/invocation.js';
import type { Outcome } from '../domain/outcomes.js';
import { replacementOf, type Decision, type ReasonCode } from '../domain/results.js';
import { executeHook, type ExecuteOptions } from './execute-hook.js';
import { blankOutcome, failClosedMessage, fillExecution } from './outcome.js';
import type { Registration } from './select.js';

/** The result of the foreground pass (docs/design.md §4, steps 3-7). */
export interface PassResult {
  decision: Decision;
  decisiveHookId: string | null;
  reasonCode: ReasonCode | null;
  message: string | null;
  /** The final input when any guardrail modified it, else null. */
  modifiedInput: unknown;
  /** The invocation as the last hook left it (what background hooks see). */
  finalInvocation: Invocation;
  additionalContext: string[];
  /** Foreground outcomes: those that ran, in execution order, then those skipped. */
  outcomes: Outcome[];
  /** The hook whose answer ended the pass early, if any. */
  endedBy: string | null;
}

const RANK: Record<Decision, number> = { none: 0, allow: 1, ask: 2, deny: 3 };

/**
 * Runs the foreground hooks one at a time in (priority, registration index) order, each
 * seeing the input as modified by the hooks before it, and merges their answers by the
 * hook set's strategy. Never throws: every failure becomes an outcome. The invocation must be
 * the frozen copy hooks may share (`frozenInvocation`); replacements are frozen as applied.
 */
export async function runForegroundPass(
  registrations: Registration[],
  invocation: Invocation,
  strategy: Strategy,
  options: ExecuteOptions,
): Promise<PassResult> {
  let current = invocation;
  let decision: Decision = 'none';
  let decisive: Outcome | null = null;
  let reasonCode: ReasonCode | null = null;
  let message: string | null = null;
  let modified = false;
  let endedBy: string | null = null;
  const additionalContext: string[] = [];
  const outcomes: Outcome[] = [];

  const decide = (outcome: Outcome, next: Decision, code: ReasonCode | null, text: string | null) => {
    if (decisive) decisive.decisive = false;
    outcome.decisive = true;
    decisive = outcome;
    decision = next;
    reasonCode = code;
    message = text;
  };

  for (let order = 0; order < registrations.length; order++) {
    const registration = registrations[order]!;
    const { hook } = registration;
    const pending = executeHook(hook, current, options);
    let execution = pending instanceof Promise ? await pending : pending;
    const replacement = execution.ok ? replacementOf(execution.result) : undefined;
    if (execution.ok && replacement !== undefined && hook.capability === 'guardrail') {
      const problem = modifyProblem(current, replacement);
      if (problem !== null)
        execution = {
          ok: false,
          failureReason: 'invalid_result',
          detail: problem,
          startedAt: execution.startedAt,
          durationUs: execution.durationUs,
        };
    }
    const outcome = fillExecution(blankOutcome(registration, invocation.point), execution, order);
    outcomes.push(outcome);

    if (!execution.ok) {
      if (hook.onFailure === 'deny') {
        decide(outcome, 'deny', execution.failureReason === 'timeout' ? 'timeout' : 'runtime_error', failClosedMessage(hook, execution));
        endedBy = hook.id;
        break;
      }
      continue;
    }

    const result = execution.result;
    if (result.additionalContext) additionalContext.push(result.additionalContext);
    if (hook.capability === 'observe') {
      if (result.decision === 'deny' || result.decision === 'ask' || result.decision === 'modify' || replacement !== undefined) {
        const what = result.decision === 'allow' ? 'allow with a replacement input' : result.decision;
        outcome.failureReason = 'observe_only_violation';
        outcome.failureDetail = `an observer returned ${what}; observers may only watch (declare capability "guardrail" to decide)`;
      }
      continue;
    }

    // A replacement (a modify, or an allow/ask that also rewrites) is applied first; an
    // allow or ask then counts as a decision like any other.
    if (replacement !== undefined) {
      current = withModifiedInput(current, replacement);
      modified = true;
    }
    if (result.decision === 'modify') {
      if (strategy === 'first_decision_wins') {
        decide(outcome, 'allow', null, result.reason ?? null);
        endedBy = hook.id;
        break;
      }
      continue;
    }
    if (result.decision === 'none') continue;

    if (strategy === 'first_decision_wins') {
      decide(outcome, result.decision, result.decision === 'deny' ? result.reasonCode : null, outcome.message);
      endedBy = hook.id;
      break;
    }
    // deny_wins: deny ends the pass; otherwise the stronger decision is kept, first come first kept on ties.
    if (RANK[result.decision] > RANK[decision]) {
      decide(outcome, result.decision, result.decision === 'deny' ? result.reasonCode : null, outcome.message);
    }
    if (result.decision === 'deny') {
      endedBy = hook.id;
      break;
    }
  }

  for (const registration of registrations.slice(outcomes.length)) {
    outcomes.push({ ...blankOutcome(registration, invocation.point), status: 'skipped', skipReason: 'pass_ended', skippedBy: endedBy });
  }

  return {
    decision,
    decisiveHookId: (decisive as Outcome | null)?.hookId ?? null,
    reasonCode,
    message,
    modifiedInput: modified ? modifiableInput(current) : null,
    finalInvocation: current,
    additionalContext,
    outcomes,
    endedBy,
  };
}
