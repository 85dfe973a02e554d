import type { Report } from '../domain/outcomes.js';
import { oneLine } from '../domain/text.js';
import { decisionReason } from './claude-output.js';
import { CLAUDE_TEXT_LIMIT } from '../runtimes/claude-wire.js';

/**
 * Texts that every agent adapter puts in its answers, so that a user reads the same words
 * whichever agent they run: a block names the decisive hook and `hookledger explain ID`.
 */

export { decisionReason };

/** Keeps an answer text within the limit the agents show whole (Claude Code's 10,000 characters). */
export function capAnswerText(text: string): string {
  return text.length > CLAUDE_TEXT_LIMIT ? `${text.slice(0, CLAUDE_TEXT_LIMIT - 1)}…` : text;
}

/**
 * The reason for a deny that stands in for an `ask` where the agent cannot ask the user,
 * e.g. `[hookledger] confirmation required by confirm-push: pushes need a human; Codex cannot
 * ask, so this is denied (hookledger explain 42)`.
 */
export function confirmationRequiredReason(report: Report, agent: string, what = 'this is denied'): string {
  const hook = report.decisiveHookId ?? 'hookledger';
  const message = report.message ? `: ${oneLine(report.message)}` : '';
  return capAnswerText(
    `[hookledger] confirmation required by ${hook}${message}; ${agent} cannot ask, so ${what} (hookledger explain ${report.invocationId})`,
  );
}

/** The reason when hookledger itself could not decide (bad input, unknown event, ledger failure). */
export function undecidedReason(problem: string): string {
  return capAnswerText(`hookledger could not decide: ${oneLine(problem)}`);
}

/** The hooks whose rewrite was applied, for a refusal naming them. */
export function modifierIds(report: Report): string {
  const ids = report.outcomes
    .filter((o) => o.modifiedInput !== null && o.capability === 'guardrail' && o.failureReason === null)
    .map((o) => o.hookId);
  return ids.length > 0 ? ids.join(', ') : 'a hook';
}

/** `[hookledger] denied: <why> (hookledger explain 42)`: a rewrite the agent cannot take is refused, never dropped. */
export function rewriteRefusedReason(report: Report, why: string): string {
  return capAnswerText(
    `[hookledger] denied: ${modifierIds(report)} rewrote the input, but ${why} (hookledger explain ${report.invocationId})`,
  );
}

/** Additional context joined in execution order, or null when there is none. */
export function joinedContext(parts: readonly string[]): string | null {
  const present = parts.filter((p) => p.trim() !== '');
  return present.length > 0 ? capAnswerText(present.join('\n\n')) : null;
}
