import type { Report } from '../domain/outcomes.js';
import { CLAUDE_TEXT_LIMIT } from '../runtimes/claude-wire.js';
import { oneLine } from '../domain/text.js';
import { confirmationRequiredText, couldNotDecideText, decisionText, explainHint, modifiers, rewriteRefusedText } from './answer-text.js';

/**
 * Report → the answer Claude Code expects for that event (reference/claude-code-hooks.md
 * sections 5 and 6). Pure: the command adapter prints it, the server sends it as the body.
 */

/** What hookledger hands back to Claude Code for one event. */
export interface ClaudeAnswer {
  /** 0, or 2 where only an exit code can express the block (the server turns that into JSON). */
  exitCode: 0 | 2;
  /** Exactly one JSON object for stdout (or the http body); `{}` when there is nothing to say. */
  json: Record<string, unknown>;
  /** One line for stderr: the block reason on exit 2, else a log line (or null). */
  stderr: string | null;
}

/** How the events answer a block, by the protocol's own means. */
type BlockStyle =
  /** hookSpecificOutput.permissionDecision */
  | 'permission_decision'
  /** hookSpecificOutput.decision.behavior */
  | 'permission_request'
  /** top-level decision: "block" + reason */
  | 'top_level'
  /** hookSpecificOutput.action: "decline" */
  | 'elicitation'
  /** exit 2 + stderr: events that can block but have no JSON form for it */
  | 'exit_2';

/**
 * Events that can block (section 2), and how. Everything else cannot block: a deny there
 * is recorded and logged, and the event proceeds.
 */
const BLOCKING_EVENTS: Readonly<Record<string, BlockStyle>> = {
  PreToolUse: 'permission_decision',
  PermissionRequest: 'permission_request',
  UserPromptSubmit: 'top_level',
  UserPromptExpansion: 'top_level',
  PostToolBatch: 'top_level',
  Stop: 'top_level',
  SubagentStop: 'top_level',
  ConfigChange: 'top_level',
  PreCompact: 'top_level',
  TaskCreated: 'top_level',
  TaskCompleted: 'exit_2',
  TeammateIdle: 'exit_2',
  WorktreeCreate: 'exit_2',
  Elicitation: 'elicitation',
  ElicitationResult: 'elicitation',
};

/**
 * Events that read a top-level `decision: "block"` without it blocking anything: the reason
 * is feedback shown to Claude next to a tool result that already exists.
 */
const FEEDBACK_EVENTS: ReadonlySet<string> = new Set(['PostToolUse', 'PostToolUseFailure']);

/**
 * Events whose `hookSpecificOutput.additionalContext` is documented. Stop and SubagentStop
 * are left out on purpose: clients from early 2026 reject a Stop `hookSpecificOutput` and
 * then ignore the whole answer, so their context travels in the block reason instead.
 */
const CONTEXT_EVENTS: ReadonlySet<string> = new Set([
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'UserPromptSubmit',
  'UserPromptExpansion',
  'SessionStart',
  'Setup',
  'SubagentStart',
]);

/** True when Claude Code lets a hook block this event (section 2's "can block" column). */
export function isBlockingEvent(eventName: string | null): boolean {
  return eventName !== null && Object.hasOwn(BLOCKING_EVENTS, eventName);
}

/**
 * The reason Claude Code shows, naming the decisive hook and how to see the whole record,
 * e.g. `[hookledger] denied by no-rm (safety_violation): rm -rf is not allowed (hookledger explain 42)`.
 */
export function decisionReason(report: Report): string {
  return cap(decisionText(report));
}

/**
 * Builds Claude Code's answer for `eventName` from a report. The merged decision maps as
 * follows (docs/claude-code.md has the table and the reasons):
 * - PreToolUse: permissionDecision deny / ask / allow; a modified input goes out as
 *   `updatedInput`, with `allow` only when a guardrail allowed, else with `ask` so the user
 *   confirms the rewritten call (an `allow` would auto-approve a command nobody saw).
 * - PermissionRequest: decision.behavior deny (message, interrupt) or allow (updatedInput);
 *   ask means "show the dialog", which is what happens without a decision.
 * - PreToolUse / PermissionRequest with a modified input that is not an object: deny.
 *   Claude Code rejects any other `updatedInput` as invalid output and then ignores the
 *   whole answer, so sending it would let the original call through (fail open).
 * - events with a top-level decision: deny → `decision: "block"` with the reason.
 * - UserPromptSubmit with a modified prompt and no deny: `decision: "block"` + a
 *   `systemMessage`. Claude Code cannot take a rewritten prompt, and answering nothing would
 *   send the original (e.g. with the secret a redaction guardrail removed) to the model.
 * - TaskCompleted, TeammateIdle: deny → exit 2 with the reason on stderr.
 * - WorktreeCreate: see `worktreeAnswer`.
 * - an `ask` on an event that can block but not ask blocks it, saying confirmation was
 *   required; on an event that can do neither it is a `systemMessage` (and a stderr line).
 * - PermissionDenied: an allow is `retry: true`.
 * - additionalContext where the event documents it, joined in execution order.
 */
export function claudeAnswer(report: Report, eventName: string | null): ClaudeAnswer {
  const event = eventName ?? '';
  const json: Record<string, unknown> = {};
  const context = joinContext(report.additionalContext);
  const blockStyle = Object.hasOwn(BLOCKING_EVENTS, event) ? BLOCKING_EVENTS[event]! : null;
  const specific = (): Record<string, unknown> => {
    json.hookSpecificOutput ??= { hookEventName: event };
    return json.hookSpecificOutput as Record<string, unknown>;
  };
  let exitCode: 0 | 2 = 0;
  let stderr: string | null = null;
  const reason = report.decision === 'none' ? null : decisionReason(report);
  const modified = report.modifiedInput !== null && report.modifiedInput !== undefined;
  const toolEvent = blockStyle === 'permission_decision' || blockStyle === 'permission_request';

  if (toolEvent && modified && report.decision !== 'deny' && !isRecord(report.modifiedInput)) {
    const refusal = cap(
      `[hookledger] denied: ${modifiers(report)} rewrote the tool input as ${describeValue(report.modifiedInput)}, but Claude Code only accepts an object as updatedInput (${explainHint(report.invocationId)})`,
    );
    if (blockStyle === 'permission_decision') {
      specific().permissionDecision = 'deny';
      specific().permissionDecisionReason = refusal;
    } else {
      specific().decision = { behavior: 'deny', message: refusal };
    }
  } else if (blockStyle === 'permission_decision') {
    if (report.decision === 'deny') {
      specific().permissionDecision = 'deny';
      specific().permissionDecisionReason = reason;
    } else if (report.decision === 'ask') {
      // With ask, Claude Code shows the user the modified input to confirm.
      specific().permissionDecision = 'ask';
      specific().permissionDecisionReason = reason;
      if (modified) specific().updatedInput = report.modifiedInput;
    } else if (report.decision === 'allow') {
      specific().permissionDecision = 'allow';
      specific().permissionDecisionReason = reason;
      if (modified) specific().updatedInput = report.modifiedInput;
    } else if (modified) {
      specific().permissionDecision = 'ask';
      specific().permissionDecisionReason = cap(
        `[hookledger] ${modifiers(report)} rewrote this call; confirm the modified input (${explainHint(report.invocationId)})`,
      );
      specific().updatedInput = report.modifiedInput;
    }
  } else if (blockStyle === 'permission_request') {
    if (report.decision === 'deny') {
      const decisive = report.outcomes.find((o) => o.decisive);
      const interrupt = isRecord(decisive?.payload) && decisive.payload.interrupt === true;
      specific().decision = { behavior: 'deny', message: reason, ...(interrupt ? { interrupt: true } : {}) };
    } else if (report.decision === 'allow') {
      specific().decision = { behavior: 'allow', ...(modified ? { updatedInput: report.modifiedInput } : {}) };
    }
  } else if (event === 'WorktreeCreate') {
    ({ exitCode, stderr } = worktreeAnswer(report, reason, json));
  } else {
    // An ask where the event can block but cannot ask is a block that says confirmation was
    // required: letting the event through would drop the guardrail's question silently.
    const askBlocks = report.decision === 'ask' && blockStyle !== null;
    const blocks = report.decision === 'deny' || askBlocks;
    const blockReason = askBlocks ? cap(confirmationRequiredText(report, 'Claude Code', event)) : reason;
    if (event === 'UserPromptSubmit' && modified && report.decision !== 'deny') {
      const refusal = promptRewriteReason(report);
      json.decision = 'block';
      json.reason = refusal;
      json.systemMessage = refusal;
    } else if (blocks && blockStyle === 'top_level') {
      json.decision = 'block';
      // Stop/SubagentStop: the reason is Claude's next instruction, so context rides along in it.
      json.reason = context !== null && !CONTEXT_EVENTS.has(event) ? cap(`${blockReason}\n\n${context}`) : blockReason;
      if (askBlocks) json.systemMessage = blockReason;
    } else if (blocks && blockStyle === 'elicitation') {
      specific().action = 'decline';
      json.systemMessage = blockReason;
    } else if (blocks && blockStyle === 'exit_2') {
      exitCode = 2;
      stderr = blockReason;
    } else if (report.decision === 'deny' && FEEDBACK_EVENTS.has(event)) {
      json.decision = 'block';
      json.reason = reason;
    } else if (report.decision === 'deny') {
      stderr = `${reason} — ${event || 'this event'} cannot be blocked; recorded only`;
    } else if (report.decision === 'ask') {
      // Nothing to block or ask here: the question reaches the user as a notice, and the log says so.
      json.systemMessage = reason;
      stderr = `${reason} — ${event || 'this event'} can neither ask nor block; shown to the user, the event proceeds`;
    } else if (report.decision === 'allow' && event === 'PermissionDenied') {
      // The one thing an approval can say after the auto-mode classifier denied: try again.
      specific().retry = true;
    }
  }

  if (context !== null && CONTEXT_EVENTS.has(event) && blockStyle !== 'permission_request') {
    specific().additionalContext = context;
  }
  return { exitCode, json, stderr };
}

/**
 * WorktreeCreate hooks replace Claude Code's own worktree creation: the answer is the new
 * worktree's absolute path (plain stdout; `worktreePath` over http), any failure fails the
 * creation. The path is the message of the guardrail `allow` that decided (a wrapped Claude
 * hook's printed path is read as one); a deny, an ask, or no path at all is exit 2 with the
 * reason, so the user sees why no worktree was made.
 */
function worktreeAnswer(report: Report, reason: string | null, json: Record<string, unknown>): { exitCode: 0 | 2; stderr: string | null } {
  const path = report.decision === 'allow' ? (report.message?.trim() ?? '') : '';
  if (report.decision === 'allow' && path.startsWith('/') && !/[\r\n]/.test(path)) {
    json.hookSpecificOutput = { hookEventName: 'WorktreeCreate', worktreePath: path };
    return { exitCode: 0, stderr: null };
  }
  if (report.decision === 'deny') return { exitCode: 2, stderr: reason };
  if (report.decision === 'ask') return { exitCode: 2, stderr: cap(confirmationRequiredText(report, 'Claude Code', 'WorktreeCreate')) };
  const why =
    report.decision === 'allow'
      ? `${report.decisiveHookId ?? 'the hook'} allowed without an absolute worktree path as its message`
      : 'no hook at worktree_create answered allow with the worktree path';
  return { exitCode: 2, stderr: cap(`[hookledger] worktree not created: ${why} (${explainHint(report.invocationId)})`) };
}

/**
 * The answer when hookledger itself cannot decide (config invalid, ledger unusable, payload
 * invalid). With policy `deny` a blocking event is denied in its own format with the reason
 * "hookledger could not decide: …"; a non-blocking event (or policy `allow`) gets no
 * decision. The user always sees a `systemMessage`, because exit-0 stderr only reaches
 * Claude Code's debug log. An unknown event (stdin was not even JSON) is answered with
 * exit 2 under `deny`: it blocks where blocking is possible and is a notice elsewhere.
 */
export function internalFailureAnswer(eventName: string | null, problem: string, policy: 'deny' | 'allow'): ClaudeAnswer {
  const line = oneLine(problem);
  const reason = cap(couldNotDecideText(line));
  if (policy === 'allow' || (eventName !== null && !isBlockingEvent(eventName))) {
    const suffix = policy === 'allow' && isBlockingEvent(eventName) ? ' (HOOKLEDGER_ON_ERROR=allow: proceeding)' : '';
    return { exitCode: 0, json: { systemMessage: `${reason}${suffix}` }, stderr: `hookledger: ${line}` };
  }
  if (eventName === null) return { exitCode: 2, json: {}, stderr: reason };
  const style = BLOCKING_EVENTS[eventName]!;
  switch (style) {
    case 'permission_decision':
      return {
        exitCode: 0,
        json: { hookSpecificOutput: { hookEventName: eventName, permissionDecision: 'deny', permissionDecisionReason: reason } },
        stderr: `hookledger: ${line}`,
      };
    case 'permission_request':
      return {
        exitCode: 0,
        json: { hookSpecificOutput: { hookEventName: eventName, decision: { behavior: 'deny', message: reason } } },
        stderr: `hookledger: ${line}`,
      };
    case 'top_level':
      return { exitCode: 0, json: { decision: 'block', reason, systemMessage: reason }, stderr: `hookledger: ${line}` };
    case 'elicitation':
      return {
        exitCode: 0,
        json: { hookSpecificOutput: { hookEventName: eventName, action: 'decline' }, systemMessage: reason },
        stderr: `hookledger: ${line}`,
      };
    case 'exit_2':
      return { exitCode: 2, json: {}, stderr: reason };
  }
}

/**
 * What command mode prints on stdout: the JSON answer, except on WorktreeCreate, where Claude
 * Code reads the new worktree's path as plain text.
 */
export function claudeStdout(answer: ClaudeAnswer): string {
  const specific = answer.json.hookSpecificOutput;
  if (isRecord(specific) && specific.hookEventName === 'WorktreeCreate' && typeof specific.worktreePath === 'string') {
    return `${specific.worktreePath}\n`;
  }
  return `${JSON.stringify(answer.json)}\n`;
}

/**
 * The JSON body an http hook answers with. HTTP status cannot block, so an exit-2 answer
 * becomes `continue: false` (the one JSON field every event honours) with the reason.
 */
export function claudeHttpBody(answer: ClaudeAnswer): Record<string, unknown> {
  if (answer.exitCode !== 2) return answer.json;
  const reason = answer.stderr ?? 'blocked by hookledger';
  return { ...answer.json, continue: false, stopReason: reason, systemMessage: reason };
}

/**
 * Why a rewritten prompt is blocked, naming the hooks that rewrote it and their reasons, e.g.
 * `[hookledger] denied: redact-secrets rewrote the prompt (removed an API key), and Claude Code
 * cannot take a rewritten input (hookledger explain 42)`: blocked rather than sent unchanged.
 */
function promptRewriteReason(report: Report): string {
  return cap(rewriteRefusedText(report, 'Claude Code', 'the prompt'));
}

/** What a non-object replacement input is, for a reason: `a string`, `an array`, `a number` ... */
function describeValue(value: unknown): string {
  return Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

function joinContext(parts: string[]): string | null {
  const present = parts.filter((p) => p.trim() !== '');
  return present.length > 0 ? cap(present.join('\n\n')) : null;
}

/** Claude Code replaces longer strings with a file preview; keep the reason whole instead. */
function cap(text: string): string {
  return text.length > CLAUDE_TEXT_LIMIT ? `${text.slice(0, CLAUDE_TEXT_LIMIT - 1)}…` : text;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The http answer when the event itself is unknown: a body that is not a JSON object, or one
 * too large to read. Command mode exits 2 there; over http the nearest equivalent is the
 * top-level block, which PreToolUse (its legacy form), UserPromptSubmit, PostToolUse and Stop
 * honour, without the `continue: false` that would end the whole session. An error status
 * would not do: Claude Code treats it as a non-blocking error, and the tool call would run.
 */
export function unknownEventHttpBody(problem: string, policy: 'deny' | 'allow'): Record<string, unknown> {
  const answer = internalFailureAnswer(null, problem, policy);
  if (answer.exitCode !== 2) return answer.json;
  return { decision: 'block', reason: answer.stderr, systemMessage: answer.stderr };
}
