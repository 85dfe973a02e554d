import { z } from 'zod';
import { InputError } from '../domain/errors.js';
import type { InvocationInput } from '../domain/invocation.js';
import { pointForClaudeEvent } from '../domain/points.js';
import { formatIssues } from '../domain/results.js';

/**
 * A Claude Code hook payload (reference/claude-code-hooks.md section 4). Every field is
 * optional and unknown fields are kept, because the protocol grows between versions; only
 * the types of the fields hookledger reads are checked.
 */
export const claudePayloadSchema = z.looseObject({
  hook_event_name: z.string({ error: 'hook_event_name must be a string naming the Claude Code event' }),
  session_id: z.string().optional(),
  cwd: z.string().optional(),
  tool_name: z.string().optional(),
  tool_use_id: z.string().optional(),
  tool_input: z.unknown().optional(),
  tool_response: z.unknown().optional(),
  prompt: z.string().optional(),
  error: z.unknown().optional(),
  agent_id: z.string().optional(),
  agent_type: z.string().optional(),
});

export type ClaudePayload = z.infer<typeof claudePayloadSchema>;

/**
 * Maps a Claude Code payload to a canonical invocation, keeping the payload verbatim as
 * `raw`. Unknown events map to point `other` with the event name kept, so nothing the agent
 * sends is lost.
 */
export function invocationFromClaude(payload: unknown, where = 'Claude Code payload'): InvocationInput {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new InputError(`${where}: expected a JSON object`);
  }
  const parsed = claudePayloadSchema.safeParse(payload);
  if (!parsed.success) throw new InputError(`${where}: ${formatIssues(parsed.error)}`);
  const p = parsed.data;
  const point = pointForClaudeEvent(p.hook_event_name);
  return {
    point,
    eventName: p.hook_event_name,
    sessionId: p.session_id ?? null,
    toolName: p.tool_name ?? null,
    toolUseId: p.tool_use_id ?? null,
    toolInput: p.tool_input,
    toolResponse: p.tool_response,
    prompt: p.prompt ?? null,
    error: p.error,
    agent: p.agent_type ? `claude-code/${p.agent_type}` : 'claude-code',
    cwd: p.cwd ?? null,
    meta: p.agent_id ? { agentId: p.agent_id } : {},
    raw: payload,
  };
}
