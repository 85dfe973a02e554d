import * as z from 'zod';

/** Canonical lifecycle points (docs/design.md §2). `other` records events hookledger does not know. */
export const POINTS = [
  'session_start',
  'session_end',
  'user_prompt_submit',
  'pre_llm_request',
  'post_llm_response',
  'pre_tool_use',
  'post_tool_use',
  'post_tool_use_failure',
  'permission_request',
  'turn_boundary',
  'stop',
  'subagent_stop',
  'pre_compact',
  'notification',
  'error',
  // Claude Code events beyond the common lifecycle (reference/claude-code-hooks.md section 2).
  'setup',
  'instructions_loaded',
  'user_prompt_expansion',
  'message_display',
  'permission_denied',
  'post_tool_batch',
  'subagent_start',
  'task_created',
  'task_completed',
  'teammate_idle',
  'config_change',
  'cwd_changed',
  'directory_added',
  'file_changed',
  'worktree_create',
  'worktree_remove',
  'post_compact',
  'elicitation',
  'elicitation_result',
  'other',
] as const;

export type Point = (typeof POINTS)[number];

/** Names accepted as synonyms of a canonical point (meerkat and rustant vocabularies). */
export const POINT_ALIASES: Readonly<Record<string, Point>> = {
  run_started: 'session_start',
  run_completed: 'session_end',
  run_failed: 'error',
  pre_tool_execution: 'pre_tool_use',
  post_tool_execution: 'post_tool_use',
  before_tool_execution: 'pre_tool_use',
  after_tool_execution: 'post_tool_use',
  before_llm_request: 'pre_llm_request',
  after_llm_response: 'post_llm_response',
  on_session_start: 'session_start',
  on_session_end: 'session_end',
  on_error: 'error',
};

/** Claude Code `hook_event_name` → canonical point. Events not listed map to `other`. */
export const CLAUDE_EVENT_POINTS: Readonly<Record<string, Point>> = {
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
  UserPromptSubmit: 'user_prompt_submit',
  PreToolUse: 'pre_tool_use',
  PostToolUse: 'post_tool_use',
  PostToolUseFailure: 'post_tool_use_failure',
  PermissionRequest: 'permission_request',
  Stop: 'stop',
  SubagentStop: 'subagent_stop',
  PreCompact: 'pre_compact',
  Notification: 'notification',
  StopFailure: 'error',
  Setup: 'setup',
  InstructionsLoaded: 'instructions_loaded',
  UserPromptExpansion: 'user_prompt_expansion',
  MessageDisplay: 'message_display',
  PermissionDenied: 'permission_denied',
  PostToolBatch: 'post_tool_batch',
  SubagentStart: 'subagent_start',
  TaskCreated: 'task_created',
  TaskCompleted: 'task_completed',
  TeammateIdle: 'teammate_idle',
  ConfigChange: 'config_change',
  CwdChanged: 'cwd_changed',
  DirectoryAdded: 'directory_added',
  FileChanged: 'file_changed',
  WorktreeCreate: 'worktree_create',
  WorktreeRemove: 'worktree_remove',
  PostCompact: 'post_compact',
  Elicitation: 'elicitation',
  ElicitationResult: 'elicitation_result',
};

/** The point for a Claude Code event name; `other` for events hookledger does not know. */
export function pointForClaudeEvent(eventName: string): Point {
  return Object.hasOwn(CLAUDE_EVENT_POINTS, eventName) ? CLAUDE_EVENT_POINTS[eventName]! : 'other';
}

/** Canonical point → the Claude Code event name used when a hook speaks the Claude protocol. */
export const POINT_CLAUDE_EVENTS: Readonly<Partial<Record<Point, string>>> = Object.fromEntries(
  Object.entries(CLAUDE_EVENT_POINTS).map(([event, point]) => [point, event]),
);

/** Points whose hooks receive a tool name, so a `match` applies to them. */
export const TOOL_POINTS: ReadonlySet<Point> = new Set<Point>([
  'pre_tool_use',
  'post_tool_use',
  'post_tool_use_failure',
  'permission_request',
  'permission_denied',
]);

/** Resolves a canonical name or an alias; undefined when the name is unknown. */
export function resolvePoint(name: string): Point | undefined {
  if ((POINTS as readonly string[]).includes(name)) return name as Point;
  // hasOwn: `constructor` or `toString` must not resolve through the prototype.
  return Object.hasOwn(POINT_ALIASES, name) ? POINT_ALIASES[name] : undefined;
}

/** A point name as written in config or input: canonical or alias, normalised to canonical. */
export const pointSchema = z.string().transform((name, ctx): Point => {
  const point = resolvePoint(name);
  if (point === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `unknown point "${name}" (expected one of ${POINTS.filter((p) => p !== 'other').join(', ')})`,
    });
    return z.NEVER;
  }
  return point;
});
