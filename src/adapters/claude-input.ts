import * as z from 'zod';
import { InputError } from '../domain/errors.js';
import type { InvocationInput } from '../domain/invocation.js';
import { pointForClaudeEvent } from '../domain/points.js';
import { formatIssues } from '../domain/results.js';

/**
 * A Claude Code hook payload (reference/claude-code-hooks.md section 4). Every field is
 * optional and unknown fields are kept, because the protocol grows between versions; only
 * the types of the fields hookledger reads are checked. `null` counts as absent: a proxy or
 * an older client may send it for "not set".
 */
export const claudePayloadSchema = z.looseObject({
  hook_event_name: z.string({ error: 'hook_event_name must be a string naming the Claude Code event' }).nullish(),
  session_id: z.string({ error: 'session_id must be a string' }).nullish(),
  prompt_id: z.string({ error: 'prompt_id must be a string' }).nullish(),
  cwd: z.string({ error: 'cwd must be a string' }).nullish(),
  permission_mode: z.string({ error: 'permission_mode must be a string' }).nullish(),
  tool_name: z.string({ error: 'tool_name must be a string' }).nullish(),
  tool_use_id: z.string({ error: 'tool_use_id must be a string' }).nullish(),
  tool_input: z.unknown().optional(),
  tool_response: z.unknown().optional(),
  prompt: z.string({ error: 'prompt must be a string' }).nullish(),
  error: z.unknown().optional(),
  agent_id: z.string({ error: 'agent_id must be a string' }).nullish(),
  agent_type: z.string({ error: 'agent_type must be a string' }).nullish(),
});

export type ClaudePayload = z.infer<typeof claudePayloadSchema>;

/**
 * The event name of a payload that may not validate, so that a caller can still answer in
 * that event's format (the internal-failure policy needs to know whether the event blocks).
 */
export function claudeEventNameOf(payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
  const name = (payload as { hook_event_name?: unknown }).hook_event_name;
  return typeof name === 'string' && name !== '' ? name : null;
}

/**
 * Maps a Claude Code payload to a canonical invocation, keeping the payload verbatim as
 * `raw`. Unknown events map to point `other` with the event name kept, so nothing the agent
 * sends is lost; a payload without `hook_event_name` (clients before 1.0.41) is recorded
 * as `other` too. The correlation keys Claude Code offers beyond the canonical fields
 * (`prompt_id`, `agent_id`, `permission_mode`) go to `meta` so reports can use them.
 */
export function invocationFromClaude(payload: unknown, where = 'Claude Code payload'): InvocationInput {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new InputError(`${where}: expected a JSON object`);
  }
  const parsed = claudePayloadSchema.safeParse(payload);
  if (!parsed.success) throw new InputError(`${where}: ${formatIssues(parsed.error)}`);
  const p = parsed.data;
  const eventName = p.hook_event_name ?? null;
  const meta: Record<string, unknown> = {};
  if (p.agent_id) meta.agentId = p.agent_id;
  if (p.prompt_id) meta.promptId = p.prompt_id;
  if (p.permission_mode) meta.permissionMode = p.permission_mode;
  return {
    point: eventName === null ? 'other' : pointForClaudeEvent(eventName),
    eventName,
    sessionId: p.session_id ?? null,
    toolName: p.tool_name ?? null,
    toolUseId: p.tool_use_id ?? null,
    toolInput: p.tool_input ?? null,
    toolResponse: p.tool_response ?? null,
    prompt: p.prompt ?? null,
    error: p.error ?? null,
    agent: p.agent_type ? `claude-code/${p.agent_type}` : 'claude-code',
    cwd: p.cwd ?? null,
    meta,
    raw: payload,
  };
}
