import { InputError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import { frozenInvocation, invocationSchema, normaliseInvocation, type Invocation, type InvocationInput } from '../domain/invocation.js';
import type { Report } from '../domain/outcomes.js';
import { formatIssues } from '../domain/results.js';
import { BackgroundDispatcher } from './background.js';
import { decide } from './decide.js';
import type { RunObservation, RunObserver } from './observer.js';
import type { MaybePromise, RecorderOptions, RecordingLedger } from './recorder.js';
import { HookIndex } from './select.js';

export interface RunnerOptions {
  hookSet: HookSet;
  /** Where decisions are recorded: an open `Ledger` (ledger/ledger.ts) of any engine. */
  ledger: RecordingLedger;
  /** Called when recording a background hook's outcome fails (the caller already has its decision). */
  onBackgroundError?: (error: unknown) => void;
  /**
   * Told of every recorded decision and completed background outcome (telemetry, metrics), on a
   * later turn of the event loop: it never changes or delays a decision. What it throws goes to
   * `onBackgroundError`.
   */
  observer?: RunObserver;
  /**
   * Write-path options; only the integrity benchmark sets them (chaining off, to measure it).
   * @internal
   */
  writer?: RecorderOptions;
}

/** Runs invocations against one hook set and records everything in the ledger. */
export interface Runner {
  readonly hookSet: HookSet;
  /** The hook set's id in the ledger; null until an engine that stores asynchronously has stored it. */
  readonly hookSetId: number | null;
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
  const writer = ledger.writer(options.writer);
  const index = new HookIndex(hookSet);
  // A synchronous engine (SQLite) answers now, and a failure throws from createRunner as before;
  // an asynchronous one is awaited by the first run (which then reports its failure).
  const registered = writer.hookSetId(hookSet);
  let hookSetId: number | null = typeof registered === 'number' ? registered : null;
  const registering = typeof registered === 'number' ? null : registered.then((id) => (hookSetId = id));
  registering?.catch(() => {});
  /** Background writes of an asynchronous engine still in flight; `close` waits for them. */
  const writing = new Set<Promise<void>>();
  const background = new BackgroundDispatcher(hookSet.backgroundConcurrency);
  const reportBackgroundError = options.onBackgroundError ?? (() => {});
  const observer = options.observer;

  async function run(input: InvocationInput | Invocation): Promise<Report> {
    const invocation = frozenInvocation(parseInvocation(input));
    const startedAt = Date.now();
    const t0 = process.hrtime.bigint();
    const selection = index.select(invocation);
    const setId = hookSetId ?? (await registering!);
    const w0 = process.hrtime.bigint();
    // Awaited only when the engine returned a promise: see MaybePromise.
    const begun = writer.begin(setId, invocation, startedAt);
    const invocationId = typeof begun === 'number' ? begun : await begun;
    let writeNs = process.hrtime.bigint() - w0;

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
    const w1 = process.hrtime.bigint();
    const finished = writer.finish(invocationId, result, outcomes);
    const pendingRowIds = Array.isArray(finished) ? finished : await finished;
    writeNs += process.hrtime.bigint() - w1;

    // Pending outcomes are the only ones the writer returns row ids for, in selection order.
    for (const [k, { registration, outcome: pending, executionOrder }] of start.entries()) {
      const rowId = pendingRowIds[k]!;
      background.enqueue({
        registration,
        invocation: pass.finalInvocation,
        invocationId,
        outcome: pending,
        executionOrder,
        replay: false,
        onStart: (at) => guard(() => writer.startBackground(rowId, at, executionOrder)),
        onDone: (outcome) => {
          const b0 = process.hrtime.bigint();
          guard(() => writer.completeBackground(rowId, outcome));
          if (observer) {
            const ledgerWriteUs = Number((process.hrtime.bigint() - b0) / 1000n);
            notify({
              kind: 'background_done',
              hookSet,
              invocation,
              invocationId,
              outcome,
              ledgerWriteUs,
              backgroundPending: background.size,
            });
          }
        },
      });
    }

    const report: Report = {
      invocationId,
      hookSet: { id: setId, name: hookSet.name, version: hookSet.version, fingerprint: hookSet.fingerprint },
      point: invocation.point,
      ...result,
      outcomes,
      startedAt,
    };
    if (observer) {
      notify({ kind: 'decided', hookSet, invocation, report, ledgerWriteUs: Number(writeNs / 1000n), backgroundPending: background.size });
    }
    return report;
  }

  /** Hands an observation to the observer after the caller has its decision. */
  function notify(observation: RunObservation): void {
    setImmediate(() => guard(() => observer!(observation)));
  }

  function guard(write: () => MaybePromise<void>): void {
    try {
      const pending = write();
      if (pending instanceof Promise) {
        const tracked: Promise<void> = pending.catch(reportBackgroundError).finally(() => writing.delete(tracked));
        writing.add(tracked);
      }
    } catch (error) {
      reportBackgroundError(error);
    }
  }

  return {
    hookSet,
    get hookSetId() {
      return hookSetId;
    },
    run,
    get backgroundPending() {
      return background.size;
    },
    close: async (closeOptions) => {
      await background.drain(closeOptions?.deadlineMs ?? 5000);
      await Promise.all(writing);
    },
  };
}
