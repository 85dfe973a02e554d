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
 * Report → Codex CLI's answer (reference/other-agents-hooks.md, "OpenAI Codex CLI").
 * Codex parses hook output strictly and fails open: an unknown field, a bare `allow` or an
 * `ask` makes the hook "failed" and the tool runs. So every answer carries only the fields
 * Codex accepts for that event (CODEX_FIELDS below, checked by the wire tests), a deny always
 * has a non-empty reason, no opinion is an empty stdout, and whatever Codex cannot express
 * (an ask, a rewrite where it takes none) becomes a deny that says why. docs/agents.md has the table.
 */

/** Events where Codex lets a hook block, and how. */
const BLOCKING: Readonly<Record<string, 'permission_decision' | 'permission_request' | 'top_level'>> = {
  PreToolUse: 'permission_decision',
  PermissionRequest: 'permission_request',
  PostToolUse: 'top_level',
  UserPromptSubmit: 'top_level',
  Stop: 'top_level',
  SubagentStop: 'top_level',
};

/** Events whose `hookSpecificOutput.additionalContext` Codex reads (where Claude Code has it). */
const CONTEXT_EVENTS: ReadonlySet<string> = new Set(['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'SessionStart']);

/**
 * The output fields hookledger may send per Codex event: top-level keys, and the keys inside
 * `hookSpecificOutput`. Anything else is never written (Codex would reject the whole answer).
 */
export const CODEX_FIELDS: Readonly<Record<string, { top: readonly string[]; specific: readonly string[] }>> = {
  PreToolUse: {
    top: ['hookSpecificOutput'],
    specific: ['hookEventName', 'permissionDecision', 'permissionDecisionReason', 'updatedInput', 'additionalContext'],
  },
  PermissionRequest: { top: ['hookSpecificOutput'], specific: ['hookEventName', 'decision'] },
  PostToolUse: { top: ['decision', 'reason', 'hookSpecificOutput'], specific: ['hookEventName', 'additionalContext'] },
  UserPromptSubmit: { top: ['decision', 'reason', 'hookSpecificOutput'], specific: ['hookEventName', 'additionalContext'] },
  Stop: { top: ['decision', 'reason'], specific: [] },
  SubagentStop: { top: ['decision', 'reason'], specific: [] },
  SessionStart: { top: ['hookSpecificOutput'], specific: ['hookEventName', 'additionalContext'] },
};

/** True when Codex lets a hook block this event. */
export function isCodexBlockingEvent(eventName: string | null): boolean {
  return eventName !== null && Object.hasOwn(BLOCKING, eventName);
}

const specificOutput = (event: string, fields: Record<string, unknown>) => ({ hookSpecificOutput: { hookEventName: event, ...fields } });

/**
 * Builds Codex's answer for `eventName`:
 * - PreToolUse: deny → `permissionDecision: "deny"` + reason; ask → the same deny, saying that
 *   confirmation was required (Codex cannot ask); a rewrite (modify, or allow with a
 *   rewrite) → `permissionDecision: "allow"` + `updatedInput`; a bare allow → nothing (Codex
 *   rejects a bare allow); a rewrite that is not an object → deny.
 * - PermissionRequest: deny → `decision.behavior: "deny"` + message; allow → `"allow"`; ask →
 *   nothing, so Codex shows its own approval prompt; a rewrite → deny (Codex takes no rewrite there).
 * - PostToolUse, UserPromptSubmit, Stop, SubagentStop: deny or ask → `decision: "block"` +
 *   reason; a rewritten prompt → block (Codex cannot take one, and the original must not go out).
 * - additionalContext in `hookSpecificOutput` where Codex reads it; at Stop it rides in a block reason.
 * - other events cannot block: a deny is recorded and logged on stderr.
 */
export function codexAnswer(report: Report, eventName: string | null): AgentAnswer {
  const event = eventName ?? '';
  const style = Object.hasOwn(BLOCKING, event) ? BLOCKING[event]! : null;
  const context = joinedContext(report.additionalContext);
  const modified = report.modifiedInput !== null && report.modifiedInput !== undefined;
  const reason = report.decision === 'none' ? null : decisionReason(report);
  const withContext = (fields: Record<string, unknown>) =>
    context !== null && CONTEXT_EVENTS.has(event) ? { ...fields, additionalContext: context } : fields;
  const answer = (json: Record<string, unknown> | null, stderr: string | null = null): AgentAnswer => ({ exitCode: 0, json, stderr });

  if (style === 'permission_decision') {
    const deny = (why: string) => answer(specificOutput(event, withContext({ permissionDecision: 'deny', permissionDecisionReason: why })));
    if (report.decision === 'deny') return deny(reason!);
    if (report.decision === 'ask') return deny(confirmationRequired(report, 'Codex', event));
    if (modified) {
      if (!isRecord(report.modifiedInput)) return deny(rewriteRefusedReason(report, 'Codex only accepts an object as updatedInput'));
      return answer(
        specificOutput(
          event,
          withContext({
            permissionDecision: 'allow',
            permissionDecisionReason: reason ?? capAnswerText(`[hookledger] input rewritten (hookledger explain ${report.invocationId})`),
            updatedInput: report.modifiedInput,
          }),
        ),
      );
    }
    return answer(context !== null ? specificOutput(event, { additionalContext: context }) : null);
  }
  if (style === 'permission_request') {
    const deny = (message: string) => answer(specificOutput(event, { decision: { behavior: 'deny', message } }));
    if (report.decision === 'deny') return deny(reason!);
    if (modified) return deny(rewriteRefusedReason(report, 'Codex takes no rewritten input at PermissionRequest'));
    if (report.decision === 'allow') return answer(specificOutput(event, { decision: { behavior: 'allow' } }));
    return answer(null);
  }
  if (style === 'top_level') {
    const block = (why: string) => {
      if (CONTEXT_EVENTS.has(event))
        return answer({
          decision: 'block',
          reason: why,
          ...(context !== null ? specificOutput(event, { additionalContext: context }) : {}),
        });
      // Stop/SubagentStop: the reason is the agent's next instruction, so context rides along in it.
      return answer({ decision: 'block', reason: context !== null ? capAnswerText(`${why}\n\n${context}`) : why });
    };
    if (report.decision === 'deny') return block(reason!);
    if (report.decision === 'ask') return block(confirmationRequired(report, 'Codex', event));
    if (event === 'UserPromptSubmit' && modified) {
      return block(rewriteRefusedReason(report, 'Codex cannot take a rewritten prompt, so it is blocked rather than sent unchanged'));
    }
  }
  const json = context !== null && CONTEXT_EVENTS.has(event) ? specificOutput(event, { additionalContext: context }) : null;
  // Only events that cannot block get here with a deny or an ask.
  if (report.decision === 'deny' || report.decision === 'ask') {
    return answer(json, `${reason} — Codex cannot block ${event || 'this event'}; recorded only`);
  }
  return answer(json);
}

/**
 * The answer when hookledger itself cannot decide (bad JSON, an unknown event, a config or
 * ledger failure). Under the `deny` policy a blocking or unknown event gets Codex's blocking
 * form: exit 2 with the reason on stderr (and an empty stdout, which Codex does not parse
 * then). Elsewhere, or under `allow`, the event proceeds: exit 0, empty stdout, a log line.
 */
export function codexFailureAnswer(eventName: string | null, problem: string, policy: 'deny' | 'allow', known: boolean): AgentAnswer {
  const reason = undecidedReason(problem);
  if (policy === 'deny' && (!known || isCodexBlockingEvent(eventName))) return { exitCode: 2, json: null, stderr: reason };
  const suffix = policy === 'allow' && (!known || isCodexBlockingEvent(eventName)) ? ' (HOOKLEDGER_ON_ERROR=allow: proceeding)' : '';
  return { exitCode: 0, json: null, stderr: `${reason}${suffix}` };
}
