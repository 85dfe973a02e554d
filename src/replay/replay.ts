import { describeThrown, UsageError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import {
  emptyTotals,
  TOTAL_FOR_CHANGE,
  type ChangeKind,
  type DecisionState,
  type HookChange,
  type HookState,
  type ReplayResultDetail,
  type ReplayRunStatus,
  type ReplayTotals,
} from '../domain/replay.js';
import type { Ledger } from '../ledger/ledger.js';
import type { InvocationFilter } from '../ledger/queries/filters.js';
import type { ReplayOutcomeRow, ReplaySourceRow } from '../ledger/queries/replay-source.js';
import type { ReplayResultRecord } from '../ledger/replay-store.js';
import { inputRedactions } from '../ledger/stored-form.js';
import { asDecision, classify, diffHooks, hookStateOf } from './diff.js';
import { HookSetReplayer, rebuildInvocation, type Replayed } from './rerun.js';
import { oneLine } from '../domain/text.js';

/** Progress of a running replay, reported after every invocation. */
export interface ReplayProgress {
  runId: number;
  done: number;
  total: number;
  elapsedMs: number;
}

export interface ReplayOptions {
  ledger: Ledger;
  /** The hook set to replay against. */
  hookSet: HookSet;
  /**
   * The hook set that made the recording. When given it is replayed first, and the new set is
   * compared with what it decides now rather than with the recording; invocations whose
   * recording it does not reproduce are flagged (nondeterministic or environment-dependent
   * hooks), so that they are not mistaken for effects of the new set.
   */
  baseline?: HookSet;
  /** Which stored invocations (the filter `denials` takes); all completed invocations by default. */
  filter?: InvocationFilter;
  /** Only the most recent `limit` matching invocations (replayed oldest first). */
  limit?: number;
  /**
   * Invocations replayed at once; results are stored in invocation order whatever it is.
   * Default: 4 when a hook runs out of process (command, http, worker), else 1 (`defaultConcurrency`).
   */
  concurrency?: number;
  /** Run background hooks too (default false: they are recorded as skipped). */
  withBackground?: boolean;
  /** Stops the replay: in-flight invocations are abandoned, results so far are kept, the run is `incomplete`. */
  signal?: AbortSignal;
  onProgress?: (progress: ReplayProgress) => void;
  /** Called once the run is recorded, before the first invocation is replayed. */
  onStart?: (runId: number, total: number) => void;
  /** Invocations read (and results written) per batch. Default 500. */
  batchSize?: number;
}

/** What a replay returns; the results themselves are in the ledger (`showReplayRun`). */
export interface ReplayRunOutcome {
  runId: number;
  status: Exclude<ReplayRunStatus, 'running'>;
  totals: ReplayTotals;
  /** Changed invocations (everything but `unchanged`). */
  changed: number;
  durationMs: number;
}

/** Invocations replayed at once when the hook set has command, http or worker hooks. */
export const DEFAULT_REPLAY_CONCURRENCY = 4;

/**
 * The concurrency a hook set allows by default. In-process hooks share this thread, so running
 * invocations side by side gains nothing for them, and a hook that keeps state between
 * invocations (a rate limit, a per-session counter) must see the history in its order: 1.
 * Command, http and worker hooks wait on other processes, which is where concurrency pays.
 */
export function defaultConcurrency(hookSet: HookSet, baseline?: HookSet): number {
  const outOfProcess = (set: HookSet) => set.hooks.some((h) => h.runtime.kind !== 'in_process');
  return outOfProcess(hookSet) || (baseline !== undefined && outOfProcess(baseline)) ? DEFAULT_REPLAY_CONCURRENCY : 1;
}

/**
 * Replays stored invocations against a hook set (docs/design.md §7). Reads the selection in
 * keyset batches, runs each invocation with `ctx.replay = true` (up to `concurrency` at
 * once), diffs the decision and every hook's outcome against the recording (or the
 * baseline), and stores one result per invocation in id order. Never writes the live
 * `invocations`/`outcomes` tables.
 */
export async function replay(options: ReplayOptions): Promise<ReplayRunOutcome> {
  const concurrency = options.concurrency ?? defaultConcurrency(options.hookSet, options.baseline);
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new UsageError(`concurrency must be a positive integer (got ${concurrency})`);
  if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 1)) {
    throw new UsageError(`limit must be a positive integer (got ${options.limit})`);
  }
  const withBackground = options.withBackground ?? false;
  const selection = { filter: options.filter ?? {}, ...(options.limit !== undefined ? { limit: options.limit } : {}) };
  const source = await options.ledger.replaySource(selection, options.batchSize ?? 500);
  const store = options.ledger.replayRuns();
  const startedAt = Date.now();
  const totals = emptyTotals(source.total);
  const runId = await store.startRun({
    hookSet: options.hookSet,
    baseline: options.baseline ?? null,
    selection,
    options: { concurrency, withBackground },
    startedAt,
    totals,
  });
  options.onStart?.(runId, source.total);

  const replayer = new HookSetReplayer(options.hookSet, withBackground);
  const baseline = options.baseline ? new HookSetReplayer(options.baseline, withBackground) : null;
  const signal = options.signal;
  const onAbort = () => {
    void replayer.close();
    void baseline?.close();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const aborted = signal
    ? new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })))
    : null;
  const t0 = Date.now();
  let done = 0;
  let status: 'completed' | 'incomplete' = 'completed';
  try {
    for (;;) {
      if (signal?.aborted) {
        status = 'incomplete';
        break;
      }
      const rows = await source.next();
      if (rows.length === 0) break;
      const recorded = await source.recordedOutcomes(rows.map((r) => r.id));
      const results: (ReplayResultRecord | undefined)[] = new Array(rows.length);
      let next = 0;
      const worker = async () => {
        while (next < rows.length && !signal?.aborted) {
          const i = next++;
          const row = rows[i]!;
          const record = await replayOne(row, recorded.get(row.id) ?? [], replayer, baseline, withBackground, signal);
          // A result that completed after the abort may hold hooks cut short by it: abandon it.
          if (signal?.aborted) return;
          results[i] = record;
          done++;
          options.onProgress?.({ runId, done, total: source.total, elapsedMs: Date.now() - t0 });
        }
      };
      const workers = concurrency === 1 ? worker() : Promise.all(Array.from({ length: Math.min(concurrency, rows.length) }, worker));
      // An in-process hook that ignores its signal would hold the stop until its timeout: abandon it instead.
      await (aborted ? Promise.race([workers, aborted]) : workers);
      const kept: ReplayResultRecord[] = [];
      for (const record of results) {
        if (record === undefined) continue;
        kept.push(record);
        totals.replayed++;
        totals[TOTAL_FOR_CHANGE[record.change as ChangeKind]]++;
        if (record.baselineMismatch) totals.baselineMismatches++;
        if ((record as Counted).redacted) totals.redacted++;
      }
      if (kept.length > 0) await store.append(runId, kept, totals);
    }
    if (signal?.aborted) status = 'incomplete';
  } catch (error) {
    try {
      await store.finish(runId, 'incomplete', totals);
    } catch {
      // The original failure (likely the ledger itself) is the one worth reporting.
    }
    throw error;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await Promise.all([replayer.close(), baseline?.close()]);
  }
  await store.finish(runId, status, totals);
  return { runId, status, totals, changed: totals.replayed - totals.unchanged, durationMs: Date.now() - startedAt };
}

/** A record plus whether its input was redacted (counted in the totals, not stored as a column). */
type Counted = ReplayResultRecord & { redacted?: boolean };

const DECISIONS_ONLY = (o: ReplayOutcomeRow, withBackground: boolean) => withBackground || o.mode === 'foreground';

async function replayOne(
  row: ReplaySourceRow,
  recordedOutcomes: ReplayOutcomeRow[],
  replayer: HookSetReplayer,
  baseline: HookSetReplayer | null,
  withBackground: boolean,
  signal: AbortSignal | undefined,
): Promise<Counted> {
  const recorded: DecisionState = {
    decision: asDecision(row.decision),
    decisiveHookId: row.decisive_hook_id,
    reasonCode: row.reason_code,
    message: row.message,
    modifiedInputJson: row.modified_input_json,
  };
  // Background hooks never decide; without --with-background they do not run, so comparing them would only add noise.
  const recordedIds: string[] = [];
  const recordedStates: HookState[] = [];
  for (const o of recordedOutcomes) {
    if (!DECISIONS_ONLY(o, withBackground)) continue;
    recordedIds.push(o.hook_id);
    recordedStates.push({
      status: o.status,
      decision: o.decision,
      decisive: o.decisive === 1,
      reasonCode: o.reason_code,
      failureReason: o.failure_reason,
    });
  }
  const warnings: string[] = [];
  const inputRedacted = redactedInputPaths(row.redactions_json);
  if (inputRedacted.length > 0) {
    warnings.push(`input was redacted before it was stored (${describeFields(inputRedacted)}): the replayed input is incomplete`);
  }

  let invocation: Invocation;
  try {
    invocation = rebuildInvocation(row);
  } catch (error) {
    return failedRecord(row, recorded, `the stored invocation could not be read: ${describeThrown(error)}`, warnings);
  }

  let prev = recorded;
  let prevIds = recordedIds;
  let prevStates = recordedStates;
  let baselineMismatch = false;
  let baselineDetail: Pick<ReplayResultDetail, 'recorded' | 'baselineChange' | 'baselineHookChanges'> | null = null;
  let next: Replayed;
  try {
    if (baseline) {
      const base = await baseline.run(invocation, signal);
      const [baseIds, baseStates] = statesOf(base, withBackground);
      const baseHookChanges = diffHooks(recordedIds, recordedStates, baseIds, baseStates);
      const baselineChange = classify(recorded, base, baseHookChanges);
      if (baselineChange !== 'unchanged') {
        baselineMismatch = true;
        baselineDetail = { recorded, baselineChange, baselineHookChanges: baseHookChanges };
      }
      prev = stateOf(base);
      prevIds = baseIds;
      prevStates = baseStates;
    }
    next = await replayer.run(invocation, signal);
  } catch (error) {
    // The foreground pass turns hook failures into outcomes; reaching here is a bug or a broken runtime.
    return failedRecord(row, recorded, `replay failed: ${describeThrown(error)}`, warnings);
  }
  const [nextIds, nextStates] = statesOf(next, withBackground);
  const hookChanges = diffHooks(prevIds, prevStates, nextIds, nextStates);
  const change = classify(prev, next, hookChanges);

  let detailJson = '{}';
  if (change !== 'unchanged' || baselineMismatch || warnings.length > 0) {
    const detail: ReplayResultDetail = {
      point: row.point,
      sessionId: row.session_id,
      toolName: row.tool_name,
      agent: row.agent,
      input: inputLine(row.input_json),
      old: prev,
      new: stateOf(next),
      hookChanges,
      ...(baselineDetail ?? {}),
      ...(warnings.length > 0 ? { warnings } : {}),
      outcomes: next.outcomes,
    };
    detailJson = serialiseDetail(detail);
  }
  return {
    invocationId: row.id,
    change,
    oldDecision: prev.decision,
    newDecision: next.decision,
    oldDecisiveHookId: prev.decisiveHookId,
    newDecisiveHookId: next.decisiveHookId,
    baselineMismatch,
    detailJson,
    redacted: redactedInputPaths(row.redactions_json).length > 0,
  };
}

function stateOf(r: Replayed): DecisionState {
  return {
    decision: r.decision,
    decisiveHookId: r.decisiveHookId,
    reasonCode: r.reasonCode,
    message: r.message,
    modifiedInputJson: r.modifiedInputJson,
  };
}

function statesOf(r: Replayed, withBackground: boolean): [string[], HookState[]] {
  const ids: string[] = [];
  const states: HookState[] = [];
  for (const o of r.outcomes) {
    if (!withBackground && o.mode !== 'foreground') continue;
    ids.push(o.hookId);
    states.push(hookStateOf(o));
  }
  return [ids, states];
}

function failedRecord(row: ReplaySourceRow, recorded: DecisionState, error: string, warnings: string[]): Counted {
  const detail: ReplayResultDetail = {
    point: row.point,
    sessionId: row.session_id,
    toolName: row.tool_name,
    agent: row.agent,
    input: inputLine(row.input_json),
    old: recorded,
    hookChanges: [] as HookChange[],
    error,
    ...(warnings.length > 0 ? { warnings } : {}),
  };
  return {
    invocationId: row.id,
    change: 'failed',
    oldDecision: recorded.decision,
    newDecision: null,
    oldDecisiveHookId: recorded.decisiveHookId,
    newDecisiveHookId: null,
    baselineMismatch: false,
    detailJson: JSON.stringify(detail),
    redacted: redactedInputPaths(row.redactions_json).length > 0,
  };
}

/**
 * JSON for a result's detail. A hook may return a payload JSON cannot hold (a BigInt, a
 * cycle); the result is then stored without the outcomes rather than failing the replay.
 */
function serialiseDetail(detail: ReplayResultDetail): string {
  try {
    return JSON.stringify(detail);
  } catch (error) {
    const { outcomes: _outcomes, ...rest } = detail;
    const warning = `the new outcomes could not be stored (${describeThrown(error)})`;
    return JSON.stringify({ ...rest, warnings: [...(rest.warnings ?? []), warning] });
  }
}

/** The stored input on one line, cut to 160 characters: enough to recognise the call. */
function inputLine(inputJson: string | null): string {
  if (inputJson === null) return '-';
  let text = inputJson;
  try {
    const value = JSON.parse(inputJson) as unknown;
    if (typeof value === 'string') text = value;
  } catch {
    // stored text that is not JSON is shown as it is
  }
  const flat = oneLine(text);
  return flat.length > 160 ? `${flat.slice(0, 159)}…` : flat;
}

/** Redacted paths of the stored invocation that change what a replay sees (not a hook's stored answer). */
function redactedInputPaths(redactionsJson: string | null): string[] {
  if (redactionsJson === null) return [];
  try {
    const paths = JSON.parse(redactionsJson) as unknown;
    return Array.isArray(paths) ? inputRedactions(paths.filter((p): p is string => typeof p === 'string')) : ['(unreadable)'];
  } catch {
    return ['(unreadable)'];
  }
}

function describeFields(paths: string[]): string {
  return `fields ${paths.slice(0, 5).join(', ')}${paths.length > 5 ? ', …' : ''}`;
}
