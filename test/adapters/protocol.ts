/**
 * A checker for Claude Code hook answers, written from reference/claude-code-hooks.md
 * section 6 (independently of src/adapters/claude-output.ts): returns the problems found,
 * so a test can assert an empty list and see every violation at once.
 */

const UNIVERSAL = new Set(['continue', 'stopReason', 'suppressOutput', 'systemMessage', 'terminalSequence']);
/** Events that read a top-level `decision: "block"` (+ `reason`). */
const TOP_LEVEL_DECISION = new Set([
  'UserPromptSubmit',
  'UserPromptExpansion',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'Stop',
  'SubagentStop',
  'ConfigChange',
  'PreCompact',
  'TaskCreated',
]);
/**
 * `hookSpecificOutput` fields each event documents. Stop/SubagentStop are absent on purpose:
 * older clients reject a Stop hookSpecificOutput and drop the whole answer.
 */
const SPECIFIC: Record<string, Set<string>> = {
  PreToolUse: new Set(['permissionDecision', 'permissionDecisionReason', 'updatedInput', 'additionalContext']),
  PermissionRequest: new Set(['decision']),
  PermissionDenied: new Set(['retry']),
  PostToolUse: new Set(['additionalContext', 'updatedToolOutput', 'updatedMCPToolOutput', 'classifierContext']),
  PostToolUseFailure: new Set(['additionalContext']),
  PostToolBatch: new Set(['additionalContext']),
  Setup: new Set(['additionalContext']),
  SubagentStart: new Set(['additionalContext']),
  UserPromptExpansion: new Set(['additionalContext']),
  UserPromptSubmit: new Set(['additionalContext', 'sessionTitle', 'suppressOriginalPrompt']),
  SessionStart: new Set(['additionalContext', 'initialUserMessage', 'sessionTitle', 'watchPaths', 'reloadSkills']),
  Elicitation: new Set(['action', 'content']),
  ElicitationResult: new Set(['action', 'content']),
  CwdChanged: new Set(['watchPaths']),
  FileChanged: new Set(['watchPaths']),
  MessageDisplay: new Set(['displayContent']),
  /** The http form; a command hook prints the path as its last stdout line instead. */
  WorktreeCreate: new Set(['worktreePath']),
};
const TEXT_LIMIT = 10_000;

export function protocolProblems(event: string, answer: unknown): string[] {
  const problems: string[] = [];
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return ['answer is not a JSON object'];
  const out = answer as Record<string, unknown>;
  for (const key of Object.keys(out)) {
    if (!UNIVERSAL.has(key) && key !== 'decision' && key !== 'reason' && key !== 'hookSpecificOutput')
      problems.push(`unknown top-level key ${key}`);
  }
  if ('decision' in out) {
    if (out.decision !== 'block') problems.push(`top-level decision must be "block", got ${JSON.stringify(out.decision)}`);
    if (!TOP_LEVEL_DECISION.has(event)) problems.push(`${event} does not take a top-level decision`);
    if (typeof out.reason !== 'string' || out.reason.trim() === '') problems.push('decision "block" needs a reason');
  } else if ('reason' in out) {
    problems.push('reason without decision');
  }
  for (const key of ['stopReason', 'systemMessage', 'reason']) {
    if (key in out && (typeof out[key] !== 'string' || (out[key] as string).length > TEXT_LIMIT))
      problems.push(`${key} must be a string of at most ${TEXT_LIMIT} chars`);
  }
  if ('continue' in out && typeof out.continue !== 'boolean') problems.push('continue must be a boolean');
  if ('hookSpecificOutput' in out) {
    const specific = out.hookSpecificOutput as Record<string, unknown>;
    if (typeof specific !== 'object' || specific === null) return [...problems, 'hookSpecificOutput must be an object'];
    if (specific.hookEventName !== event)
      problems.push(`hookSpecificOutput.hookEventName must be ${event}, got ${JSON.stringify(specific.hookEventName)}`);
    const allowed = SPECIFIC[event];
    if (!allowed) problems.push(`${event} documents no hookSpecificOutput`);
    for (const key of Object.keys(specific)) {
      if (key !== 'hookEventName' && allowed && !allowed.has(key))
        problems.push(`hookSpecificOutput.${key} is not documented for ${event}`);
    }
    if ('permissionDecision' in specific && !['allow', 'deny', 'ask', 'defer'].includes(specific.permissionDecision as string)) {
      problems.push(`permissionDecision ${JSON.stringify(specific.permissionDecision)} is not allow/deny/ask/defer`);
    }
    if ('permissionDecisionReason' in specific && typeof specific.permissionDecisionReason !== 'string')
      problems.push('permissionDecisionReason must be a string');
    if (
      'updatedInput' in specific &&
      (typeof specific.updatedInput !== 'object' || specific.updatedInput === null || Array.isArray(specific.updatedInput))
    ) {
      problems.push('updatedInput must be an object (it replaces the whole tool input)');
    }
    if ('updatedInput' in specific && !['allow', 'ask'].includes(specific.permissionDecision as string)) {
      problems.push('updatedInput needs permissionDecision allow or ask');
    }
    if (
      'additionalContext' in specific &&
      (typeof specific.additionalContext !== 'string' || (specific.additionalContext as string).length > TEXT_LIMIT)
    ) {
      problems.push('additionalContext must be a string of at most 10,000 chars');
    }
    if ('decision' in specific) {
      const d = specific.decision as Record<string, unknown>;
      if (typeof d !== 'object' || d === null || !['allow', 'deny'].includes(d.behavior as string))
        problems.push('decision.behavior must be allow or deny');
      else {
        for (const key of Object.keys(d)) {
          if (!['behavior', 'updatedInput', 'updatedPermissions', 'message', 'interrupt'].includes(key))
            problems.push(`decision.${key} is not documented`);
        }
        if (d.behavior === 'allow' && ('message' in d || 'interrupt' in d)) problems.push('message/interrupt only go with behavior deny');
      }
    }
  }
  return problems;
}
