import * as z from 'zod';
import type { InvocationInput } from '../domain/invocation.js';
import type { Point } from '../domain/points.js';
import { isRecord, parsePayload } from './agent-payload.js';

/**
 * Gemini CLI hook payloads (reference/other-agents-hooks.md, "Google Gemini CLI"). Unknown
 * fields are kept in `raw`; only the types of the fields hookledger reads are checked.
 */
export const geminiPayloadSchema = z.looseObject({
  hook_event_name: z.string({ error: 'hook_event_name must be a string naming the Gemini CLI event' }).nullish(),
  session_id: z.string({ error: 'session_id must be a string' }).nullish(),
  cwd: z.string({ error: 'cwd must be a string' }).nullish(),
  timestamp: z.string({ error: 'timestamp must be a string' }).nullish(),
  tool_name: z.string({ error: 'tool_name must be a string' }).nullish(),
  tool_input: z.unknown().optional(),
  tool_response: z.unknown().optional(),
  original_request_name: z.string({ error: 'original_request_name must be a string' }).nullish(),
  prompt: z.string({ error: 'prompt must be a string' }).nullish(),
  prompt_response: z.unknown().optional(),
  llm_request: z.unknown().optional(),
  llm_response: z.unknown().optional(),
  notification_type: z.string({ error: 'notification_type must be a string' }).nullish(),
  message: z.unknown().optional(),
});

/** Gemini CLI `hook_event_name` → hookledger point. Events without a point of their own are recorded as `other`. */
export const GEMINI_EVENT_POINTS: Readonly<Record<string, Point>> = {
  BeforeTool: 'pre_tool_use',
  AfterTool: 'post_tool_use',
  BeforeAgent: 'user_prompt_submit',
  AfterAgent: 'stop',
  BeforeModel: 'pre_llm_request',
  AfterModel: 'post_llm_response',
  BeforeToolSelection: 'other',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
  PreCompress: 'pre_compact',
  Notification: 'notification',
};

/** The point for a Gemini CLI event name; `other` for events hookledger does not know. */
export function pointForGeminiEvent(eventName: string): Point {
  return Object.hasOwn(GEMINI_EVENT_POINTS, eventName) ? GEMINI_EVENT_POINTS[eventName]! : 'other';
}

/**
 * Maps a Gemini CLI payload to a canonical invocation: agent `gemini-cli`, the event name
 * kept, the payload verbatim as `raw`. An AfterTool whose `tool_response.error` is set is a
 * failed tool (`post_tool_use_failure`). At BeforeModel/AfterModel the model request is the
 * modifiable input (`toolInput`), so a `modify` there rewrites `llm_request`.
 */
export function invocationFromGemini(payload: unknown, where = 'Gemini CLI payload'): InvocationInput {
  const p = parsePayload(geminiPayloadSchema, payload, where);
  const eventName = p.hook_event_name ?? null;
  let point: Point = eventName === null ? 'other' : pointForGeminiEvent(eventName);
  const response = p.tool_response;
  if (point === 'post_tool_use' && isRecord(response) && response.error !== undefined && response.error !== null && response.error !== '') {
    point = 'post_tool_use_failure';
  }
  const model = eventName === 'BeforeModel' || eventName === 'AfterModel';
  const meta: Record<string, unknown> = {};
  if (p.timestamp) meta.timestamp = p.timestamp;
  if (p.original_request_name) meta.originalRequestName = p.original_request_name;
  if (p.notification_type) meta.notificationType = p.notification_type;
  return {
    point,
    eventName,
    sessionId: p.session_id ?? null,
    toolName: p.tool_name ?? null,
    toolInput: (model ? p.llm_request : p.tool_input) ?? null,
    toolResponse: (model ? p.llm_response : eventName === 'AfterAgent' ? p.prompt_response : response) ?? null,
    prompt: p.prompt ?? null,
    error: point === 'post_tool_use_failure' && isRecord(response) ? response.error : null,
    agent: 'gemini-cli',
    cwd: p.cwd ?? null,
    meta,
    raw: payload,
  };
}
