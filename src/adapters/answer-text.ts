import type { Outcome, Report } from '../domain/outcomes.js';
import { oneLine } from '../domain/text.js';

/**
 * The wording of the texts hookledger puts in agents' answers (deny reasons, refusals),
 * shared by every agent adapter so one situation reads the same way whichever agent asked.
 * Each text names the decisive hook and the ledger record, because an agent keeps at most
 * one reason and some (meerkat) overwrite the hook id with their own.
 */

/** Where the whole record is: the ledger id `hookledger explain` takes. */
export function explainHint(invocationId: number): string {
  return `hookledger explain ${invocationId}`;
}

/** The decisive hook of a report, or `hookledger` when the decision was not a hook's. */
export function decisiveHook(report: Report): string {
  return report.decisiveHookId ?? 'hookledger';
}

/**
 * The reason for a decision, e.g.
 * `[hookledger] denied by no-rm (safety_violation): rm -rf is not allowed (hookledger explain 42)`.
 */
export function decisionText(report: Report): string {
  const verb = report.decision === 'deny' ? 'denied by' : report.decision === 'ask' ? 'confirmation asked by' : 'allowed by';
  const code = report.decision === 'deny' && report.reasonCode ? ` (${report.reasonCode})` : '';
  return `[hookledger] ${verb} ${decisiveHook(report)}${code}${messagePart(report)} (${explainHint(report.invocationId)})`;
}

/**
 * An `ask` where the agent cannot ask its user: the event is denied (blocked), never let
 * through silently, and the text says that confirmation was required, e.g.
 * `[hookledger] denied: force-push requires confirmation (push to main?), and meerkat cannot
 * ask at pre_tool_execution (hookledger explain 42)`.
 */
export function confirmationRequiredText(report: Report, agent: string, where: string): string {
  return `[hookledger] denied: ${decisiveHook(report)} requires confirmation${parenthesised(report.message)}, and ${agent} cannot ask at ${where} (${explainHint(report.invocationId)})`;
}

/**
 * A rewrite the agent cannot take: the event is denied rather than run unchanged, and the
 * text names every hook that rewrote it, e.g. `[hookledger] denied: redact rewrote the tool
 * input (removed a token), and meerkat cannot take a rewritten input (hookledger explain 42)`.
 */
export function rewriteRefusedText(report: Report, agent: string, what: string): string {
  const outcomes = modifyingOutcomes(report);
  const reasons = outcomes
    .filter((o) => o.message !== null && o.message.trim() !== '')
    .map((o) => (outcomes.length > 1 ? `${o.hookId}: ${oneLine(o.message!)}` : oneLine(o.message!)));
  return `[hookledger] denied: ${modifiers(report)} rewrote ${what}${parenthesised(reasons.join('; '))}, and ${agent} cannot take a rewritten input (${explainHint(report.invocationId)})`;
}

/** The text when hookledger itself could not decide: `hookledger could not decide: <problem>`. */
export function couldNotDecideText(problem: string): string {
  return `hookledger could not decide: ${oneLine(problem)}`;
}

/**
 * The guardrails whose rewrite was applied (a `modify`, or an allow/ask with a replacement), in
 * execution order. An observer's, or a failed one, is only recorded.
 */
export function modifyingOutcomes(report: Report): Outcome[] {
  return report.outcomes.filter((o) => o.modifiedInput !== null && o.capability === 'guardrail' && o.failureReason === null);
}

/** The ids of the hooks that rewrote the input, comma-separated; `a hook` when none is on record. */
export function modifiers(report: Report): string {
  const ids = modifyingOutcomes(report).map((o) => o.hookId);
  return ids.length > 0 ? ids.join(', ') : 'a hook';
}

function messagePart(report: Report): string {
  return report.message ? `: ${oneLine(report.message)}` : '';
}

function parenthesised(text: string | null): string {
  return text !== null && text.trim() !== '' ? ` (${oneLine(text)})` : '';
}
