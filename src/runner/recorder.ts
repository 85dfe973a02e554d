import type { HookSet } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import type { Outcome, Report } from '../domain/outcomes.js';

/**
 * A value settled now or later. The SQLite engine writes synchronously and returns plain values,
 * which the runner uses without an `await` (each await is a turn of the microtask queue on the
 * path of every agent event); a network engine returns promises.
 */
export type MaybePromise<T> = T | Promise<T>;

/** The final state of an invocation, committed with its outcomes. */
export type InvocationResult = Pick<
  Report,
  'decision' | 'decisiveHookId' | 'reasonCode' | 'message' | 'modifiedInput' | 'additionalContext' | 'durationUs'
>;

/**
 * What the runner needs from storage: the write path of one hook set's invocations. The runner
 * declares it and every storage engine implements it (`Ledger.writer()` in ledger/ledger.ts), so
 * the runner depends on no engine. Failures are LedgerErrors (the runner's caller decides what a
 * guardrail does then: see the README's failure policy).
 */
export interface InvocationRecorder {
  /** The ledger id of a hook set, storing it on first use. */
  hookSetId(hookSet: HookSet): MaybePromise<number>;
  /** Records the invocation `running` before any hook runs; returns its id. */
  begin(hookSetId: number, invocation: Invocation, startedAt: number): MaybePromise<number>;
  /**
   * Commits the final state and every outcome in one transaction. Background outcomes are stored
   * `pending`; their row ids come back in the order given, for `startBackground`/`completeBackground`.
   * `finishedAt` defaults to now (a writer with its own clock, e.g. a generated history, passes it).
   */
  finish(invocationId: number, result: InvocationResult, outcomes: Outcome[], finishedAt?: number): MaybePromise<number[]>;
  /** Marks a pending background outcome as started. */
  startBackground(outcomeRowId: number, startedAt: number, executionOrder: number): MaybePromise<void>;
  /** Completes a pending background outcome (off the decision path). */
  completeBackground(outcomeRowId: number, outcome: Outcome): MaybePromise<void>;
}

/** Options of a recorder. @internal */
export interface RecorderOptions {
  /**
   * Append tamper-evidence chain links (default true). Only the integrity benchmark turns this
   * off, to measure what chaining costs: records written without links fail `verify`.
   */
  chain?: boolean;
  /**
   * Commit the writes of concurrent invocations together (a server deciding many at once):
   * `begin` and `finish` then answer with promises that settle once their shared transaction
   * is committed. An engine without it writes each on its own. Default false. A function: group
   * only while it answers true (serve: while requests arrive together, so that a lone request is
   * not held a turn of the event loop for company that is not coming).
   */
  groupCommit?: boolean | (() => boolean);
  /** The host recorded with each invocation (default: this machine's name). */
  host?: string;
}

/** The storage a runner records into: a factory of recorders (one per runner). */
export interface RecordingLedger {
  /** A recorder for one runner; it caches hook-set ids and redaction rules. */
  writer(options?: RecorderOptions): InvocationRecorder;
}
