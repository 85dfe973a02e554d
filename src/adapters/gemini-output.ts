import type { Report } from '../domain/outcomes.js';
import type { AgentAnswer } from './agent-answer.js';
import { isRecord } from './agent-payload.js';
import {
  capAnswerText,
  confirmationRequired,
  decisionReason,
  joinedContext,
  rewriteRefusedReason,
  undecidedReason,
} from './agent-answer.js';

/**
 * Report → Gemini CLI's answer (reference/other-agents-hooks.md, "Google Gemini CLI"): a flat
 * top-level `decision` (`allow`, `deny`, `ask`) and `reason`, `systemMessage` for the user,
 * and `hookSpecificOutput` for a rewrite (`tool_input`, `llm_request`) or `additionalContext`.
 * Gemini fails open on a crash or timeout, so hookledger always answers, and answers with
 * JSON (honoured whatever the exit code). docs/agents.md has the table.
 */

/** Events where Gemini CLI honours a `decision: "deny"`. */
const BLOCKING_EVENTS: ReadonlySet<string> = new Set(['BeforeTool', 'AfterTool', 'BeforeAgent', 'AfterAgent', 'BeforeModel', 'AfterModel']);

/** Events whose `hookSpecificOutput.additionalContext` Gemini reads. */
const CONTEXT_EVENTS: ReadonlySet<string> = new Set(['BeforeAgent', 'AfterTool', 'SessionStart']);

/** Where each event takes a rewritten input, inside `hookSpecificOutput`. */
const REWRITE_FIELD: Readonly<Record<string, string>> = { BeforeTool: 'tool_input', BeforeModel: 'llm_request' };

/** The output fields hookledger may send per Gemini event (top level, and inside `hookSpecificOutput`). */
export const GEMINI_FIELDS = {
  top: ['decision', 'reason', 'systemMessage', 'hookSpecificOutput'],
  decisions: ['allow', 'deny', 'ask'],
  specific: ['hookEventName', 'tool_input', 'llm_request', 'additionalContext'],
} as const;

/** True when Gemini CLI lets a hook block this event. */
export function isGeminiBlockingEvent(eventName: string | null): boolean {
  return eventName !== null && BLOCKING_EVENTS.has(eventName);
}

/**
 * Builds Gemini CLI's answer for `eventName`:
 * - deny → `decision: "deny"` + reason where the event can block (BeforeTool: the reason goes
 *   to the model as the tool's error; AfterAgent: it becomes a retry prompt).
 * - ask → `decision: "ask"` at BeforeTool (Gemini asks the user); elsewhere Gemini cannot ask,
 *   so a deny saying that confirmation was required.
 * - allow → `decision: "allow"` at BeforeTool; elsewhere nothing (allowing is the default).
 * - a rewrite → `hookSpecificOutput.tool_input` (BeforeTool) or `llm_request` (BeforeModel),
 *   with the decision if there was one. Gemini MERGES tool_input over the model's arguments,
 *   so a rewrite that drops a key (or is not an object) cannot be expressed: it is denied
 *   rather than half applied. A rewritten prompt (BeforeAgent) is blocked for the same reason.
 * - additionalContext where Gemini reads it; at AfterAgent it rides in a deny's reason.
 * - a deny where the event cannot block is recorded and shown to the user as a systemMessage.
 * `originalInput` is the input the agent sent (tool_input, llm_request), which a rewrite is merged over.
 */
export function geminiAnswer(report: Report, eventName: string | null, originalInput: unknown): AgentAnswer {
  const event = eventName ?? '';
  const json: Record<string, unknown> = {};
  const specific = (): Record<string, unknown> => {
    json.hookSpecificOutput ??= { hookEventName: event };
    return json.hookSpecificOutput as Record<string, unknown>;
  };
  const context = joinedContext(report.additionalContext);
  const modified = report.modifiedInput !== null && report.modifiedInput !== undefined;
  const reason = report.decision === 'none' ? null : decisionReason(report);
  const blocking = BLOCKING_EVENTS.has(event);
  const rewriteField = Object.hasOwn(REWRITE_FIELD, event) ? REWRITE_FIELD[event]! : null;
  const deny = (why: string): AgentAnswer => {
    json.decision = 'deny';
    json.reason = context !== null && event === 'AfterAgent' ? capAnswerText(`${why}\n\n${context}`) : why;
    if (context !== null && CONTEXT_EVENTS.has(event)) specific().additionalContext = context;
    return { exitCode: 0, json, stderr: null };
  };

  if (report.decision === 'deny' && blocking) return deny(reason!);
  if (report.decision === 'ask' && blocking && event !== 'BeforeTool') return deny(confirmationRequired(report, 'Gemini CLI', event));
  if (modified && report.decision !== 'deny') {
    if (rewriteField === null) {
      if (event === 'BeforeAgent') {
        return deny(rewriteRefusedReason(report, 'Gemini CLI cannot take a rewritten prompt, so it is blocked rather than sent unchanged'));
      }
    } else {
      const problem = mergeProblem(originalInput, report.modifiedInput);
      if (problem !== null) return deny(rewriteRefusedReason(report, problem));
      specific()[rewriteField] = report.modifiedInput;
    }
  }
  if (event === 'BeforeTool' && (report.decision === 'ask' || report.decision === 'allow')) {
    json.decision = report.decision;
    json.reason = reason;
  }
  if (context !== null && CONTEXT_EVENTS.has(event)) specific().additionalContext = context;
  let stderr: string | null = null;
  if (!blocking && (report.decision === 'deny' || report.decision === 'ask')) {
    // Not blockable here: the user still sees why, and the ledger has it.
    json.systemMessage = reason;
    stderr = `${reason} — Gemini CLI cannot block ${event || 'this event'}; recorded only`;
  }
  return { exitCode: 0, json, stderr };
}

/**
 * Why a rewrite cannot be sent as a merge over `original`, or null when it can: it must be an
 * object, and every key of the original must still be there (a merge cannot remove one).
 */
export function mergeProblem(original: unknown, rewrite: unknown): string | null {
  if (!isRecord(rewrite)) return 'Gemini CLI only accepts an object as a rewritten input';
  if (!isRecord(original)) return null;
  const dropped = Object.keys(original).filter((key) => !Object.hasOwn(rewrite, key));
  if (dropped.length === 0) return null;
  return `Gemini CLI merges a rewrite over the original input and cannot remove ${dropped.map((k) => `"${k}"`).join(', ')}`;
}

/**
 * The answer when hookledger itself cannot decide (bad JSON, an unknown event, a config or
 * ledger failure). Under `deny`, a blocking or unknown event gets both of Gemini's blocking
 * forms: `decision: "deny"` on stdout and exit 2 with the reason on stderr. Elsewhere, or
 * under `allow`, the event proceeds and the user is told in a systemMessage.
 */
export function geminiFailureAnswer(eventName: string | null, problem: string, policy: 'deny' | 'allow', known: boolean): AgentAnswer {
  const reason = undecidedReason(problem);
  const blocks = !known || isGeminiBlockingEvent(eventName);
  if (policy === 'deny' && blocks) return { exitCode: 2, json: { decision: 'deny', reason, systemMessage: reason }, stderr: reason };
  const suffix = policy === 'allow' && blocks ? ' (HOOKLEDGER_ON_ERROR=allow: proceeding)' : '';
  return { exitCode: 0, json: { systemMessage: `${reason}${suffix}` }, stderr: reason };
}
