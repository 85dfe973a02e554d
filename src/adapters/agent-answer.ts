import type { Report } from '../domain/outcomes.js';
import { CLAUDE_TEXT_LIMIT } from '../runtimes/claude-wire.js';
import { confirmationRequiredText, couldNotDecideText, decisionText, explainHint, modifiers } from './answer-text.js';

/**
 * What a command-hook adapter hands back to its agent for one event: the stdout JSON (null =
 * print nothing), the exit code, and one stderr line. The CLI prints it; nothing else is written.
 */
export interface AgentAnswer {
  exitCode: 0 | 2;
  /** Exactly one JSON object for stdout, or null for an empty stdout ("no opinion"). */
  json: Record<string, unknown> | null;
  /** The block reason on exit 2, else a log line (or null). */
  stderr: string | null;
}

/**
 * The answer texts of answer-text.ts, kept within the length agents show whole (Claude Code's
 * 10,000 characters; Codex and Gemini CLI document no limit, so the same one).
 */
export function capAnswerText(text: string): string {
  return text.length > CLAUDE_TEXT_LIMIT ? `${text.slice(0, CLAUDE_TEXT_LIMIT - 1)}…` : text;
}

export const decisionReason = (report: Report) => capAnswerText(decisionText(report));
export const confirmationRequired = (report: Report, agent: string, event: string) =>
  capAnswerText(confirmationRequiredText(report, agent, event || 'this event'));
export const undecidedReason = (problem: string) => capAnswerText(couldNotDecideText(problem));

/**
 * A rewrite the agent cannot take in this form, with the agent-specific reason, e.g.
 * `[hookledger] denied: drop-key rewrote the input, but Gemini CLI merges a rewrite over the
 * original input and cannot remove "directory" (hookledger explain 42)`.
 */
export function rewriteRefusedReason(report: Report, why: string): string {
  return capAnswerText(`[hookledger] denied: ${modifiers(report)} rewrote the input, but ${why} (${explainHint(report.invocationId)})`);
}

/** Additional context joined in execution order, or null when there is none. */
export function joinedContext(parts: readonly string[]): string | null {
  const present = parts.filter((p) => p.trim() !== '');
  return present.length > 0 ? capAnswerText(present.join('\n\n')) : null;
}
