import { InputError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import { frozenInvocation, invocationSchema, normaliseInvocation, type Invocation, type InvocationInput } from '../domain/invocation.js';
import type { Report } from '../domain/outcomes.js';
import { formatIssues } from '../domain/results.js';
import type { Ledger } from '../ledger/open.js';
import { LedgerWriter, type LedgerWriterOptions } from '../ledger/write.js';
import { BackgroundDispatcher } from './background.js';
import { decide } from './decide.js';
import { HookIndex } from './select.js';

export interface RunnerOptions {
  hookSet: HookSet;
  ledger: Ledger;
  /** Called when recording a background hook's outcome fails (the caller already has its decision). */
  onBackgroundError?: (error: unknown) => void;
  /**
   * Write-path options; only the integrity benchmark sets them (chaining off, to measure it).
   * @internal
   */
  writer?: LedgerWriterOptions;
}

/** Runs invocations against one hook set and records everything in the ledger. */
export interface Runner {
  readonly hookSet: HookSet;
  /** The hook set's id in the ledger. */
  readonly hookSetId: number;
  /**
   * Decides one invocation. The invocation is recorded `running` before any hook runs, and its
   * final state with every foreground outcome is committed before this resolves. Throws
   * InputError for a malformed invocation and LedgerError when the ledger cannot be written
   * (callers deciding a guardrail point should then deny: see the README's failure policy).
   */
  run(input: InvocationInput | Invocation): Promise<Report>;
  /** Background hooks queued or running. */
  readonly backgroundPending: number;
  /** Waits for background hooks (at most `deadlineMs`, default 5000), then stops. Does not close the ledger. */
  close(options?: { deadlineMs?: number }): Promise<void>;
}

/** Validates an invocation from any source; the error names the field that is wrong. */
export function parseInvocation(input: unknown, where = 'invocation'): Invocation {
  const parsed = invocationSchema.safeParse(input);
  if (!parsed.success) throw new InputError(`${where}: ${formatIssues(parsed.error)}`);
  return normaliseInvocation(parsed.data);
}

/** Creates a runner for a hook set over an open ledger. */
export function createRunner(options: RunnerOptions): Runner {
  const { hookSet, ledger } = options;
  const writer = new LedgerWriter(ledger, options.writer);
  const index = new HookIndex(hookSet);
  const hookSetId = writer.hookSetId(hookSet);
  const background = new BackgroundDispatcher(hookSet.backgroundConcurrency);
  const reportBackgroundError = options.onBackgroundError ?? (() => {});

  async function run(input: InvocationInput | Invocation): Promise<Report> {
    const invocation = frozenInvocation(parseInvocation(input));
    const startedAt = Date.now();
    const t0 = process.hrtime.bigint();
    const selection = index.select(invocation);
    const invocationId = writer.begin(hookSetId, invocation, startedAt);

    const { pass, outcomes, start } = await decide(selection, invocation, hookSet.strategy, { replay: false, invocationId });
    const durationUs = Number((process.hrtime.bigint() - t0) / 1000n);
    const result = {
      decision: pass.decision,
      decisiveHookId: pass.decisiveHookId,
      reasonCode: pass.reasonCode,
      message: pass.message,
      modifiedInput: pass.modifiedInput,
      additionalContext: pass.additionalContext,
      durationUs,
    };
    const pendingRowIds = writer.finish(invocationId, result, outcomes);

    // Pending outcomes are the only ones the writer returns row ids for, in selection order.
    for (const [k, { registration, outcome, executionOrder }] of start.entries()) {
      const rowId = pendingRowIds[k]!;
      background.enqueue({
        registration,
        invocation: pass.finalInvocation,
        invocationId,
        outcome,
        executionOrder,
        replay: false,
        onStart: (at) => guard(() => writer.startBackground(rowId, at, executionOrder)),
        onDone: (done) => guard(() => writer.completeBackground(rowId, done)),
      });
    }

    return {
      invocationId,
      hookSet: { id: hookSetId, name: hookSet.name, version: hookSet.version, fingerprint: hookSet.fingerprint },
      point: invocation.point,
      ...result,
      outcomes,
      startedAt,
    };
  }

  function guard(write: () => void): void {
    try {
      write();
    } catch (error) {
      reportBackgroundError(error);
    }
  }

  return {
    hookSet,
    hookSetId,
    run,
    get backgroundPending() {
      return background.size;
    },
    close: (closeOptions) => background.drain(closeOptions?.deadlineMs ?? 5000),
  };
}
