/**
 * A checker for Gemini CLI hook answers, written from reference/other-agents-hooks.md ("Google
 * Gemini CLI") independently of src/adapters/gemini-output.ts. Returns the problems found.
 */
const TOP = ['decision', 'reason', 'continue', 'stopReason', 'systemMessage', 'suppressOutput', 'hookSpecificOutput'];
const DECISIONS = ['allow', 'deny', 'block', 'ask', 'approve'];
/** hookSpecificOutput fields, and the events that read them. */
const SPECIFIC: Record<string, string[] | null> = {
  hookEventName: null,
  tool_input: ['BeforeTool'],
  llm_request: ['BeforeModel'],
  llm_response: ['AfterModel'],
  additionalContext: ['BeforeAgent', 'AfterTool', 'SessionStart', 'BeforeTool'],
};
const nonEmpty = (v: unknown) => typeof v === 'string' && v.trim() !== '';

export function geminiProblems(event: string, stdout: string, exitCode: number | null, stderr: string): string[] {
  const problems: string[] = [];
  if (exitCode !== 0 && exitCode !== 2) return [`exit ${exitCode}: Gemini CLI treats it as a failed hook and goes ahead`];
  if (exitCode === 2 && stderr.trim() === '') problems.push('exit 2 needs the reason on stderr');
  let out: Record<string, unknown>;
  try {
    out = JSON.parse(stdout) as Record<string, unknown>;
  } catch {
    return [...problems, `stdout is not JSON (Gemini would take plain text as allow): ${stdout.slice(0, 60)}`];
  }
  if (typeof out !== 'object' || out === null || Array.isArray(out)) return [...problems, 'stdout is not a JSON object'];
  for (const key of Object.keys(out)) if (!TOP.includes(key)) problems.push(`unknown top-level ${key}`);
  if ('decision' in out) {
    if (!DECISIONS.includes(out.decision as string)) problems.push(`decision ${JSON.stringify(out.decision)}`);
    if ((out.decision === 'deny' || out.decision === 'block' || out.decision === 'ask') && !nonEmpty(out.reason))
      problems.push(`${String(out.decision)} needs a reason`);
  }
  const specific = out.hookSpecificOutput as Record<string, unknown> | undefined;
  if (specific !== undefined) {
    for (const key of Object.keys(specific)) {
      if (!(key in SPECIFIC)) problems.push(`unknown hookSpecificOutput.${key}`);
      else if (SPECIFIC[key] !== null && !SPECIFIC[key]!.includes(event)) problems.push(`${event} does not read hookSpecificOutput.${key}`);
    }
    if (
      'tool_input' in specific &&
      (typeof specific.tool_input !== 'object' || specific.tool_input === null || Array.isArray(specific.tool_input))
    )
      problems.push('tool_input must be an object');
  }
  if (exitCode === 2 && out.decision !== 'deny' && out.decision !== 'block') problems.push('exit 2 with a JSON answer that does not deny');
  return problems;
}
