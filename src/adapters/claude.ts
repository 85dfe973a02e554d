import { describeThrown, InputError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import type { Report } from '../domain/outcomes.js';
import type { Ledger } from '../ledger/open.js';
import { createRunner, type Runner, type RunnerOptions } from '../runner/runner.js';
import { claudeEventNameOf, invocationFromClaude } from './claude-input.js';
import { claudeAnswer, internalFailureAnswer, type ClaudeAnswer } from './claude-output.js';

/**
 * Claude Code command mode, minus the printing (the CLI prints): one payload in, one
 * answer out, and never an exception, because an exit 1 is an answer Claude Code ignores.
 */

/** What hookledger does when it cannot decide a blocking event. */
export type OnErrorPolicy = 'deny' | 'allow';

/** Default wait for background hooks after the answer is printed, ms. */
export const DEFAULT_BACKGROUND_DEADLINE_MS = 2000;

/**
 * The policy from `--on-error`, else `HOOKLEDGER_ON_ERROR`, else `deny`. An unrecognised
 * value is reported and falls back to deny: a typo must not open the gate.
 */
export function resolveOnErrorPolicy(flag: string | undefined, env: NodeJS.ProcessEnv): { policy: OnErrorPolicy; problem: string | null } {
  const [value, source] = flag !== undefined ? [flag, '--on-error'] : [env.HOOKLEDGER_ON_ERROR, 'HOOKLEDGER_ON_ERROR'];
  if (value === undefined || value === '') return { policy: 'deny', problem: null };
  const normalised = value.trim().toLowerCase();
  if (normalised === 'deny' || normalised === 'allow') return { policy: normalised, problem: null };
  return { policy: 'deny', problem: `${source}: "${value}" is not deny or allow; using deny` };
}

/** Parses stdin text as the Claude Code payload; the error says what arrived. */
export function parseClaudeJson(text: string, where: string): unknown {
  if (text.trim() === '') throw new InputError(`${where}: empty; expected the Claude Code hook JSON`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new InputError(`${where}: not valid JSON (${describeThrown(error)}); starts with: ${text.trimStart().slice(0, 60)}`);
  }
}

/** One Claude Code event decided (or not) by a runner. */
export interface ClaudeOutcome {
  answer: ClaudeAnswer;
  /** The report, when the runner decided; null when hookledger could not. */
  report: Report | null;
  eventName: string | null;
}

/**
 * Runs one parsed Claude payload through a runner and builds the answer for its event.
 * Any failure (invalid payload, ledger error) becomes the internal-failure answer.
 */
export async function answerClaudePayload(
  runner: Runner,
  payload: unknown,
  policy: OnErrorPolicy,
  where = 'Claude Code payload',
): Promise<ClaudeOutcome> {
  const eventName = claudeEventNameOf(payload);
  try {
    const report = await runner.run(invocationFromClaude(payload, where));
    return { answer: claudeAnswer(report, eventName), report, eventName };
  } catch (error) {
    return { answer: internalFailureAnswer(eventName, describeThrown(error), policy), report: null, eventName };
  }
}

export interface ClaudeCommandDeps {
  /** Resolves to stdin's text. Started before the config loads so the two overlap. */
  input: Promise<string>;
  loadHookSet: () => Promise<HookSet>;
  openLedger: () => Ledger;
  /** Builds the runner (default createRunner); the CLI's adds telemetry. Its close() is awaited by `finish`. */
  createRunner?: (options: RunnerOptions) => Runner;
  policy: OnErrorPolicy;
  /** Close the ledger in `finish` (default false: the process is about to exit). */
  closeLedger?: boolean;
  /** Called when a background hook's outcome could not be recorded. */
  onBackgroundError?: (error: unknown) => void;
}

/** An answer plus the work left after printing it. */
export interface ClaudeCommandResult extends ClaudeOutcome {
  /** Waits for background hooks up to `deadlineMs` (and closes the ledger if asked). Never throws. */
  finish(deadlineMs: number): Promise<void>;
}

/**
 * Command mode: reads the payload, loads the hook set, opens the ledger, decides. Each
 * step's failure is answered by the internal-failure policy in the event's own format.
 */
export async function decideClaudeCommand(deps: ClaudeCommandDeps): Promise<ClaudeCommandResult> {
  let ledger: Ledger | null = null;
  let runner: Runner | null = null;
  const finish = async (deadlineMs: number) => {
    try {
      if (runner) await runner.close({ deadlineMs });
    } catch {
      // Background outcomes are best effort once the answer is out.
    }
    // The ledger is left open on purpose: every write is already committed, and closing the
    // last connection checkpoints the WAL (milliseconds on every event). The process exits
    // next; the following open or SQLite's auto-checkpoint folds the WAL in.
    if (deps.closeLedger) {
      try {
        ledger?.close();
      } catch {
        // Closing a ledger that failed mid-write must not turn into an exit 1.
      }
    }
  };
  // Load the config while stdin arrives; a .ts config costs the most start-up time.
  const hookSetLoading = deps.loadHookSet();
  hookSetLoading.catch(() => {});
  let payload: unknown;
  try {
    payload = parseClaudeJson(await deps.input, 'stdin');
  } catch (error) {
    return { answer: internalFailureAnswer(null, describeThrown(error), deps.policy), report: null, eventName: null, finish };
  }
  const eventName = claudeEventNameOf(payload);
  try {
    const hookSet = await hookSetLoading;
    ledger = deps.openLedger();
    runner = (deps.createRunner ?? createRunner)({
      hookSet,
      ledger,
      ...(deps.onBackgroundError ? { onBackgroundError: deps.onBackgroundError } : {}),
    });
  } catch (error) {
    return { answer: internalFailureAnswer(eventName, describeThrown(error), deps.policy), report: null, eventName, finish };
  }
  const outcome = await answerClaudePayload(runner, payload, deps.policy, 'stdin');
  return { ...outcome, finish };
}
