/**
 * A checker for Codex CLI hook answers, written from reference/other-agents-hooks.md ("OpenAI
 * Codex CLI") independently of src/adapters/codex-output.ts: Codex parses strictly, so any
 * field it does not accept for the event makes the hook "failed" and the action goes ahead.
 * Returns the problems found.
 */

/** Top-level keys and hookSpecificOutput keys Codex accepts, per event. */
const ACCEPTED: Record<string, { top: string[]; specific: string[] }> = {
  PreToolUse: {
    top: ['hookSpecificOutput', 'decision', 'reason'],
    specific: ['hookEventName', 'permissionDecision', 'permissionDecisionReason', 'updatedInput', 'additionalContext'],
  },
  PermissionRequest: { top: ['hookSpecificOutput'], specific: ['hookEventName', 'decision'] },
  PostToolUse: { top: ['decision', 'reason', 'hookSpecificOutput'], specific: ['hookEventName', 'additionalContext'] },
  UserPromptSubmit: { top: ['decision', 'reason', 'hookSpecificOutput'], specific: ['hookEventName', 'additionalContext'] },
  Stop: { top: ['decision', 'reason'], specific: [] },
  SubagentStop: { top: ['decision', 'reason'], specific: [] },
  SessionStart: { top: ['hookSpecificOutput'], specific: ['hookEventName', 'additionalContext'] },
};

const nonEmpty = (v: unknown) => typeof v === 'string' && v.trim() !== '';

export function codexProblems(event: string, stdout: string, exitCode: number | null): string[] {
  const problems: string[] = [];
  if (exitCode !== 0 && exitCode !== 2) return [`exit ${exitCode}: Codex treats it as a failed hook and goes ahead`];
  if (exitCode === 2) return stdout.trim() === '' ? [] : ['exit 2 with stdout: Codex reads stderr then'];
  if (stdout.trim() === '') return [];
  let out: Record<string, unknown>;
  try {
    out = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    return ['stdout is not JSON'];
  }
  if (stdout.trim().split('\n').length !== 1) problems.push('more than one line on stdout');
  if (typeof out !== 'object' || out === null || Array.isArray(out)) return ['stdout is not a JSON object'];
  const accepted = ACCEPTED[event];
  if (!accepted) return [`${event} takes no JSON answer, got ${stdout.trim()}`];
  for (const key of Object.keys(out)) if (!accepted.top.includes(key)) problems.push(`${event} rejects top-level ${key}`);
  if ('decision' in out) {
    if (out.decision !== 'block') problems.push(`top-level decision must be "block", got ${JSON.stringify(out.decision)}`);
    if (!nonEmpty(out.reason)) problems.push('decision "block" needs a non-empty reason');
  } else if ('reason' in out) problems.push('reason without decision');
  const specific = out.hookSpecificOutput as Record<string, unknown> | undefined;
  if (specific !== undefined) {
    if (typeof specific !== 'object' || specific === null) return [...problems, 'hookSpecificOutput is not an object'];
    if (specific.hookEventName !== event) problems.push(`hookEventName must be ${event}, got ${JSON.stringify(specific.hookEventName)}`);
    for (const key of Object.keys(specific))
      if (!accepted.specific.includes(key)) problems.push(`${event} rejects hookSpecificOutput.${key}`);
    if ('additionalContext' in specific && !nonEmpty(specific.additionalContext))
      problems.push('additionalContext must be a non-empty string');
    if (event === 'PreToolUse') {
      const d = specific.permissionDecision;
      if (d !== undefined && d !== 'deny' && d !== 'allow')
        problems.push(`permissionDecision ${JSON.stringify(d)} is not supported (only deny, or allow with updatedInput)`);
      if (d === 'deny' && !nonEmpty(specific.permissionDecisionReason)) problems.push('deny needs a non-empty permissionDecisionReason');
      if (
        d === 'allow' &&
        (typeof specific.updatedInput !== 'object' || specific.updatedInput === null || Array.isArray(specific.updatedInput))
      )
        problems.push('a bare allow is not supported (allow only with an updatedInput object)');
      if (d === undefined && ('updatedInput' in specific || 'permissionDecisionReason' in specific))
        problems.push('updatedInput/reason without permissionDecision');
    }
    if (event === 'PermissionRequest') {
      const decision = specific.decision as Record<string, unknown> | undefined;
      if (typeof decision !== 'object' || decision === null) problems.push('PermissionRequest needs decision {behavior, message}');
      else {
        for (const key of Object.keys(decision))
          if (key !== 'behavior' && key !== 'message') problems.push(`decision.${key} is not accepted`);
        if (decision.behavior !== 'allow' && decision.behavior !== 'deny') problems.push(`behavior ${JSON.stringify(decision.behavior)}`);
        if (decision.behavior === 'deny' && !nonEmpty(decision.message)) problems.push('a deny needs a non-empty message');
      }
    }
  }
  return problems;
}
