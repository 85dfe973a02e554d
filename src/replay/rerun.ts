import type { HookSet } from '../domain/hooks.js';
import { frozenInvocation, type Invocation } from '../domain/invocation.js';
import type { Outcome } from '../domain/outcomes.js';
import type { DecisionState } from '../domain/replay.js';
import { Redactor } from '../ledger/redact.js';
import { inputPathOf, redactOutcome, storedDecision } from '../ledger/stored-form.js';
import type { ReplaySourceRow } from '../ledger/queries/replay-source.js';
import { BackgroundDispatcher } from '../runner/background.js';
import { decide } from '../runner/decide.js';
import { HookIndex } from '../runner/select.js';

/**
 * Rebuilds the invocation the agent sent from a stored row: the canonical invocation (stored
 * without `raw`), the agent's raw payload, and the ORIGINAL modifiable input (`input_json`),
 * never the input as the recorded hooks left it. Rows were validated when they were written,
 * so they are not validated again: at replay speeds a zod parse per row would dominate.
 */
export function rebuildInvocation(row: ReplaySourceRow): Invocation {
  const stored = JSON.parse(row.invocation_json) as Partial<Invocation> & Record<string, unknown>;
  const point = row.point;
  const input = row.input_json === null ? null : (JSON.parse(row.input_json) as unknown);
  return {
    point,
    eventName: stored.eventName ?? null,
    sessionId: stored.sessionId ?? null,
    turn: stored.turn ?? null,
    toolName: stored.toolName ?? null,
    toolUseId: stored.toolUseId ?? null,
    toolInput: point === 'user_prompt_submit' ? (stored.toolInput ?? null) : input,
    toolResponse: stored.toolResponse ?? null,
    prompt: point === 'user_prompt_submit' ? (typeof input === 'string' ? input : (stored.prompt ?? null)) : (stored.prompt ?? null),
    error: stored.error ?? null,
    agent: stored.agent ?? null,
    cwd: stored.cwd ?? null,
    meta: stored.meta ?? {},
    raw: row.raw_json === null ? null : (JSON.parse(row.raw_json) as unknown),
  };
}

/** A replayed decision with every outcome (foreground in execution order, then background). */
export interface Replayed extends DecisionState {
  outcomes: Outcome[];
}

/**
 * Runs stored invocations through one hook set with `ctx.replay = true`, exactly as the live
 * runner would (same selection, same foreground pass) but without a ledger: the caller keeps
 * the result. Background hooks run only when asked, and are then awaited so that their
 * outcomes belong to the replay result; otherwise they are recorded as skipped.
 */
export class HookSetReplayer {
  private readonly index: HookIndex;
  private readonly background: BackgroundDispatcher | null;
  /** The hook set's redaction rules, applied as the live write path applies them (ledger/stored-form.ts). */
  private readonly redactor: Redactor;

  constructor(
    readonly hookSet: HookSet,
    withBackground: boolean,
  ) {
    this.index = new HookIndex(hookSet);
    this.redactor = new Redactor(hookSet.redact ?? {});
    this.background = withBackground ? new BackgroundDispatcher(hookSet.backgroundConcurrency) : null;
  }

  async run(stored: Invocation, signal: AbortSignal | undefined): Promise<Replayed> {
    const invocation = frozenInvocation(stored, 'stored invocation');
    const selection = this.index.select(invocation);
    const options = signal ? { replay: true, invocationId: null, signal } : { replay: true, invocationId: null };
    const decided = await decide(
      selection,
      invocation,
      this.hookSet.strategy,
      options,
      this.background ? null : 'replay_without_background',
    );
    const { pass } = decided;
    let outcomes = decided.outcomes;
    const dispatcher = this.background;
    if (dispatcher && decided.start.length > 0) {
      // Awaited here, unlike the live runner: their outcomes belong to the replay result.
      outcomes = outcomes.slice();
      const first = pass.outcomes.length;
      await Promise.all(
        decided.start.map(
          ({ registration, outcome, index, executionOrder }) =>
            new Promise<void>((resolve) =>
              dispatcher.enqueue({
                registration,
                invocation: pass.finalInvocation,
                invocationId: null,
                outcome,
                executionOrder,
                replay: true,
                onStart: () => {},
                onDone: (done) => {
                  outcomes[first + index] = done;
                  resolve();
                },
              }),
            ),
        ),
      );
    }
    // Redacted and capped the way the live write path stores them, so that equal means equal,
    // and so that replay results never hold in clear what the live tables hold as a marker.
    const asStored = storedDecision(this.redactor, invocation.point, pass);
    const inputPath = inputPathOf(invocation.point);
    return {
      decision: pass.decision,
      decisiveHookId: pass.decisiveHookId,
      reasonCode: pass.reasonCode,
      message: asStored.message,
      modifiedInputJson: asStored.modifiedInputJson,
      outcomes: outcomes.map((o) => redactOutcome(this.redactor, o, inputPath).outcome),
    };
  }

  /** Stops background hooks still running (after an abort); queued ones are recorded as skipped. */
  async close(): Promise<void> {
    await this.background?.drain(0);
  }
}
