import type { HookSet } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import type { Outcome, Report } from '../domain/outcomes.js';

/**
 * What a runner tells its observer (telemetry, metrics). Observers get the decision after it
 * is recorded, on a later turn of the event loop, so nothing they do can change or delay it.
 * Hook-supplied text is as the hooks returned it: an observer that shows or exports it must
 * redact it the way the ledger stores it (ledger/stored-form.ts).
 */
export type RunObservation =
  | {
      kind: 'decided';
      hookSet: HookSet;
      /** The invocation as the agent sent it (before any modify). */
      invocation: Invocation;
      report: Report;
      /** µs spent writing the ledger for this decision (begin and final commit). */
      ledgerWriteUs: number;
      /** Background hooks queued or running right after this decision was made. */
      backgroundPending: number;
    }
  | {
      kind: 'background_done';
      hookSet: HookSet;
      invocation: Invocation;
      invocationId: number;
      /** The completed (or skipped) background outcome, as recorded. */
      outcome: Outcome;
      ledgerWriteUs: number;
      backgroundPending: number;
    };

/** Receives every observation; exceptions it throws are reported through `onBackgroundError`, never to the caller of run(). */
export type RunObserver = (observation: RunObservation) => void;
