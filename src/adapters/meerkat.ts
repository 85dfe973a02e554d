import { describeThrown, InputError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import type { Report } from '../domain/outcomes.js';
import type { Ledger } from '../ledger/open.js';
import { createRunner, type Runner, type RunnerOptions } from '../runner/runner.js';
import type { OnErrorPolicy } from './claude.js';
import { invocationFromMeerkat, meerkatPointOf } from './meerkat-input.js';
import { meerkatAnswer, meerkatFailureAnswer, type MeerkatAnswer } from './meerkat-output.js';

/**
 * meerkat command and http mode, minus the printing: one invocation in, one answer out, and
 * never an exception. meerkat fails the whole agent run on a non-zero exit, a non-2xx status
 * or an answer it cannot parse, so every failure here is answered by the error policy.
 */

/** One meerkat invocation decided (or not). */
export interface MeerkatOutcome {
  answer: MeerkatAnswer;
  /** The report, when the runner decided; null when hookledger could not. */
  report: Report | null;
  /** meerkat's point name, when the payload had one. */
  pointName: string | null;
  /** What went wrong, for one log line, when hookledger could not decide. */
  problem: string | null;
}

export interface MeerkatLimits {
  policy: OnErrorPolicy;
  /** meerkat's `[hooks] payload_max_bytes`: invocations over it are refused, answers kept under it. */
  payloadMaxBytes: number;
}

/** Parses the invocation text; over the byte limit, empty or not JSON is an InputError saying so. */
export function parseMeerkatJson(text: string, where: string, payloadMaxBytes: number): unknown {
  const bytes = Buffer.byteLength(text);
  if (bytes > payloadMaxBytes) {
    throw new InputError(`${where}: ${bytes} bytes exceeds payload_max_bytes ${payloadMaxBytes} (--payload-max-bytes)`);
  }
  if (text.trim() === '') throw new InputError(`${where}: empty; expected the meerkat hook invocation JSON`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new InputError(`${where}: not valid JSON (${describeThrown(error)}); starts with: ${text.trimStart().slice(0, 60)}`);
  }
}

/** Runs one parsed invocation through a runner; any failure becomes the error policy's answer. */
export async function answerMeerkatPayload(
  runner: Runner,
  payload: unknown,
  limits: MeerkatLimits,
  where = 'meerkat invocation',
): Promise<MeerkatOutcome> {
  const pointName = meerkatPointOf(payload);
  try {
    const report = await runner.run(invocationFromMeerkat(payload, where));
    return { answer: meerkatAnswer(report, pointName ?? 'this point', limits.payloadMaxBytes), report, pointName, problem: null };
  } catch (error) {
    const problem = describeThrown(error);
    return { answer: meerkatFailureAnswer(problem, limits.policy, limits.payloadMaxBytes), report: null, pointName, problem };
  }
}

export interface MeerkatCommandDeps extends MeerkatLimits {
  /** Resolves to stdin's text. Started before the config loads so the two overlap. */
  input: Promise<string>;
  loadHookSet: () => Promise<HookSet>;
  openLedger: () => Ledger;
  /** Builds the runner (default createRunner); the CLI's adds telemetry. Its close() is awaited by `finish`. */
  createRunner?: (options: RunnerOptions) => Runner;
  onBackgroundError?: (error: unknown) => void;
}

export interface MeerkatCommandResult extends MeerkatOutcome {
  /** Waits for background hooks up to `deadlineMs`. Never throws. */
  finish(deadlineMs: number): Promise<void>;
}

/**
 * Command mode: reads the invocation, loads the hook set, opens the ledger, decides. Each
 * step's failure is answered by the error policy. The ledger is left open on purpose (see
 * `decideClaudeCommand`): the process exits next.
 */
export async function decideMeerkatCommand(deps: MeerkatCommandDeps): Promise<MeerkatCommandResult> {
  let runner: Runner | null = null;
  const finish = async (deadlineMs: number) => {
    try {
      if (runner) await runner.close({ deadlineMs });
    } catch {
      // Background outcomes are best effort once the answer is out.
    }
  };
  const failed = (pointName: string | null, error: unknown): MeerkatCommandResult => {
    const problem = describeThrown(error);
    return { answer: meerkatFailureAnswer(problem, deps.policy, deps.payloadMaxBytes), report: null, pointName, finish, problem };
  };
  const hookSetLoading = deps.loadHookSet();
  hookSetLoading.catch(() => {});
  let payload: unknown;
  try {
    payload = parseMeerkatJson(await deps.input, 'stdin', deps.payloadMaxBytes);
  } catch (error) {
    return failed(null, error);
  }
  const pointName = meerkatPointOf(payload);
  try {
    runner = (deps.createRunner ?? createRunner)({
      hookSet: await hookSetLoading,
      ledger: deps.openLedger(),
      ...(deps.onBackgroundError ? { onBackgroundError: deps.onBackgroundError } : {}),
    });
  } catch (error) {
    return failed(pointName, error);
  }
  return { ...(await answerMeerkatPayload(runner, payload, deps, 'stdin')), finish };
}
