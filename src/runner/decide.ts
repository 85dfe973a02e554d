import type { Strategy } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import type { Outcome } from '../domain/outcomes.js';
import type { ExecuteOptions } from './execute-hook.js';
import { runForegroundPass, type PassResult } from './foreground.js';
import { blankOutcome } from './outcome.js';
import type { Registration, Selection } from './select.js';

/** A background hook the decision lets start: its pending outcome and where it runs in execution order. */
export interface BackgroundStart {
  registration: Registration;
  /** The `pending` outcome that `Decided.outcomes` holds for it (same object). */
  outcome: Outcome;
  /** Its position among the background hooks of the selection (the caller's row ids follow it). */
  index: number;
  /** After every foreground hook that ran, in selection order. */
  executionOrder: number;
}

/** What one invocation's hooks decided: the pass, every outcome to record, the background hooks to start. */
export interface Decided {
  pass: PassResult;
  /** Foreground outcomes (as the pass left them), then one per background hook in selection order. */
  outcomes: Outcome[];
  /** Background hooks to run: none after a deny, none when the caller runs no background hooks. */
  start: BackgroundStart[];
}

/**
 * The decide core shared by the live runner and replay, so that replay can never drift from
 * the live path (docs/design.md, "How an invocation runs", steps 3-7): runs the foreground
 * pass, then gives each background hook its outcome: `skipped` (reason `denied`, naming the
 * decisive hook) after a deny, `skipped` with `withoutBackground` when the caller does not run
 * background hooks (replay without `--with-background`), else `pending`, to be started after
 * every foreground hook that ran.
 */
export async function decide(
  selection: Selection,
  invocation: Invocation,
  strategy: Strategy,
  options: ExecuteOptions,
  withoutBackground: 'replay_without_background' | null = null,
): Promise<Decided> {
  const pass = await runForegroundPass(selection.foreground, invocation, strategy, options);
  const background = selection.background;
  if (background.length === 0) return { pass, outcomes: pass.outcomes, start: [] };
  const denied = pass.decision === 'deny';
  let ran = 0;
  for (const o of pass.outcomes) if (o.executionOrder !== null) ran++;
  const outcomes = pass.outcomes.slice();
  const start: BackgroundStart[] = [];
  for (const [index, registration] of background.entries()) {
    const outcome = blankOutcome(registration, invocation.point);
    if (denied) {
      outcome.status = 'skipped';
      outcome.skipReason = 'denied';
      outcome.skippedBy = pass.decisiveHookId;
    } else if (withoutBackground !== null) {
      outcome.status = 'skipped';
      outcome.skipReason = withoutBackground;
    } else {
      start.push({ registration, outcome, index, executionOrder: ran + index });
    }
    outcomes.push(outcome);
  }
  return { pass, outcomes, start };
}
