import * as z from 'zod';
import type { InvocationInput } from '../domain/invocation.js';
import type { Point } from '../domain/points.js';
import { parsePayload } from './agent-payload.js';

/**
 * Codex CLI hook payloads (reference/other-agents-hooks.md, "OpenAI Codex CLI"): the same
 * snake_case shape as Claude Code's, plus `turn_id` and `model`. Unknown fields are kept in
 * `raw`; only the types of the fields hookledger reads are checked.
 */
export const codexPayloadSchema = z.looseObject({
  hook_event_name: z.string({ error: 'hook_event_name must be a string naming the Codex event' }).nullish(),
  session_id: z.string({ error: 'session_id must be a string' }).nullish(),
  turn_id: z.string({ error: 'turn_id must be a string' }).nullish(),
  cwd: z.string({ error: 'cwd must be a string' }).nullish(),
  model: z.string({ error: 'model must be a string' }).nullish(),
  permission_mode: z.string({ error: 'permission_mode must be a string' }).nullish(),
  agent_id: z.string({ error: 'agent_id must be a string' }).nullish(),
  agent_type: z.string({ error: 'agent_type must be a string' }).nullish(),
  tool_name: z.string({ error: 'tool_name must be a string' }).nullish(),
  tool_use_id: z.string({ error: 'tool_use_id must be a string' }).nullish(),
  tool_input: z.unknown().optional(),
  tool_response: z.unknown().optional(),
  prompt: z.string({ error: 'prompt must be a string' }).nullish(),
  source: z.string({ error: 'source must be a string' }).nullish(),
});

/** Codex `hook_event_name` → hookledger point. Events without a point of their own are recorded as `other`. */
export const CODEX_EVENT_POINTS: Readonly<Record<string, Point>> = {
  PreToolUse: 'pre_tool_use',
  PermissionRequest: 'permission_request',
  PostToolUse: 'post_tool_use',
  PreCompact: 'pre_compact',
  PostCompact: 'other',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
  UserPromptSubmit: 'user_prompt_submit',
  SubagentStart: 'other',
  SubagentStop: 'subagent_stop',
  Stop: 'stop',
  Interrupt: 'other',
};

/** The point for a Codex event name; `other` for events hookledger does not know. */
export function pointForCodexEvent(eventName: string): Point {
  return Object.hasOwn(CODEX_EVENT_POINTS, eventName) ? CODEX_EVENT_POINTS[eventName]! : 'other';
}

/**
 * Maps a Codex payload to a canonical invocation: agent `codex`, the event name kept, the
 * payload verbatim as `raw`, and Codex's correlation keys (turn, model, subagent) in `meta`.
 * A payload without an event name is recorded as `other`; the caller answers it as undecidable.
 */
export function invocationFromCodex(payload: unknown, where = 'Codex payload'): InvocationInput {
  const p = parsePayload(codexPayloadSchema, payload, where);
  const eventName = p.hook_event_name ?? null;
  const meta: Record<string, unknown> = {};
  if (p.turn_id) meta.turnId = p.turn_id;
  if (p.model) meta.model = p.model;
  if (p.permission_mode) meta.permissionMode = p.permission_mode;
  if (p.agent_id) meta.agentId = p.agent_id;
  if (p.agent_type) meta.agentType = p.agent_type;
  if (p.source) meta.source = p.source;
  return {
    point: eventName === null ? 'other' : pointForCodexEvent(eventName),
    eventName,
    sessionId: p.session_id ?? null,
    toolName: p.tool_name ?? null,
    toolUseId: p.tool_use_id ?? null,
    toolInput: p.tool_input ?? null,
    toolResponse: p.tool_response ?? null,
    prompt: p.prompt ?? null,
    agent: 'codex',
    cwd: p.cwd ?? null,
    meta,
    raw: payload,
  };
}
