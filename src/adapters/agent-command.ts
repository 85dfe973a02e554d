import { describeThrown, InputError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import type { InvocationInput } from '../domain/invocation.js';
import type { Report } from '../domain/outcomes.js';
import type { Ledger } from '../ledger/open.js';
import { createRunner, type Runner, type RunnerOptions } from '../runner/runner.js';
import type { AgentAnswer } from './agent-answer.js';
import { eventNameOf } from './agent-payload.js';
import type { OnErrorPolicy } from './claude.js';

/**
 * Command mode for agents other than Claude Code (Codex, Gemini CLI): one payload in, one
 * answer out in the agent's protocol, never an exception. Each agent supplies its
 * {@link AgentProtocol}; this module owns the order of the work and the failure handling.
 */

/** One agent's half of command mode. */
export interface AgentProtocol {
  /** The agent as recorded and shown (`codex`, `gemini-cli`). */
  agent: string;
  /** The agent's name in messages (`Codex`, `Gemini CLI`). */
  label: string;
  /** The agent's events; any other name is recorded, then answered as undecidable. */
  events: ReadonlySet<string>;
  toInvocation(payload: unknown, where: string): InvocationInput;
  answer(report: Report, eventName: string | null, invocation: InvocationInput): AgentAnswer;
  /** The error policy's answer; `known` is false for a missing or unknown event name. */
  failure(eventName: string | null, problem: string, policy: OnErrorPolicy, known: boolean): AgentAnswer;
}

export interface AgentCommandDeps {
  /** Resolves to stdin's text. Started before the config loads so the two overlap. */
  input: Promise<string>;
  loadHookSet: () => Promise<HookSet>;
  openLedger: () => Ledger;
  /** Builds the runner (default createRunner); the CLI's adds telemetry. Its close() is awaited by `finish`. */
  createRunner?: (options: RunnerOptions) => Runner;
  policy: OnErrorPolicy;
  onBackgroundError?: (error: unknown) => void;
}

export interface AgentCommandResult {
  answer: AgentAnswer;
  report: Report | null;
  eventName: string | null;
  /** Waits for background hooks up to `deadlineMs`. Never throws. */
  finish(deadlineMs: number): Promise<void>;
}

/**
 * Reads the payload, loads the hook set, opens the ledger, records and decides. Every step's
 * failure gets the protocol's failure answer. An event the agent does not document is still
 * recorded (point `other`, its name kept), then answered as undecidable: hookledger cannot
 * know whether it would block, so the error policy decides.
 */
export async function decideAgentCommand(protocol: AgentProtocol, deps: AgentCommandDeps): Promise<AgentCommandResult> {
  let runner: Runner | null = null;
  const finish = async (deadlineMs: number) => {
    try {
      if (runner) await runner.close({ deadlineMs });
    } catch {
      // Background outcomes are best effort once the answer is out.
    }
  };
  const failed = (eventName: string | null, error: unknown, known = eventName !== null && protocol.events.has(eventName)) => ({
    answer: protocol.failure(eventName, describeThrown(error), deps.policy, known),
    report: null,
    eventName,
    finish,
  });
  const hookSetLoading = deps.loadHookSet();
  hookSetLoading.catch(() => {});
  let payload: unknown;
  try {
    payload = parseJsonPayload(await deps.input, protocol.label);
  } catch (error) {
    return failed(null, error);
  }
  const eventName = eventNameOf(payload);
  let invocation: InvocationInput;
  try {
    invocation = protocol.toInvocation(payload, 'stdin');
    const hookSet = await hookSetLoading;
    runner = (deps.createRunner ?? createRunner)({
      hookSet,
      ledger: deps.openLedger(),
      ...(deps.onBackgroundError ? { onBackgroundError: deps.onBackgroundError } : {}),
    });
  } catch (error) {
    return failed(eventName, error);
  }
  let report: Report;
  try {
    report = await runner.run(invocation);
  } catch (error) {
    return failed(eventName, error);
  }
  if (eventName === null || !protocol.events.has(eventName)) {
    const what = eventName === null ? 'no hook_event_name' : `unknown ${protocol.label} event "${eventName}"`;
    return { ...failed(eventName, `${what} (recorded as hookledger explain ${report.invocationId})`, false), report };
  }
  return { answer: protocol.answer(report, eventName, invocation), report, eventName, finish };
}

/** Parses stdin as the agent's hook JSON; the error says what arrived. */
function parseJsonPayload(text: string, label: string): unknown {
  if (text.trim() === '') throw new InputError(`stdin: empty; expected the ${label} hook JSON`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new InputError(`stdin: not valid JSON (${describeThrown(error)}); starts with: ${text.trimStart().slice(0, 60)}`);
  }
}
