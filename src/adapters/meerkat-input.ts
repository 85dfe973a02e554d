import * as z from 'zod';
import { InputError } from '../domain/errors.js';
import type { InvocationInput } from '../domain/invocation.js';
import { resolvePoint, type Point } from '../domain/points.js';
import { formatIssues } from '../domain/results.js';

/**
 * meerkat's hook invocation (reference/meerkat-wire.md, "The invocation"): snake_case JSON,
 * `point` and `session_id` always, the rest when meaningful. Loose: newer meerkat versions
 * add fields (`provenance` on tool calls, more points), and every one is kept in `raw`.
 * Only the types of the fields hookledger reads are checked; `null` counts as absent.
 */
export const meerkatInvocationSchema = z.looseObject({
  point: z.string({ error: 'point must be a string naming the meerkat hook point' }),
  session_id: z.string({ error: 'session_id must be a string' }).nullish(),
  turn_number: z.number({ error: 'turn_number must be a number' }).int('turn_number must be a whole number').nonnegative().nullish(),
  prompt: z.string({ error: 'prompt must be a string' }).nullish(),
  prompt_input: z.unknown().optional(),
  error: z.unknown().optional(),
  error_class: z.string({ error: 'error_class must be a string' }).nullish(),
  error_report: z.unknown().optional(),
  llm_request: z.unknown().optional(),
  llm_response: z.unknown().optional(),
  tool_call: z
    .looseObject(
      {
        tool_use_id: z.string({ error: 'tool_call.tool_use_id must be a string' }).nullish(),
        name: z.string({ error: 'tool_call.name must be a string' }).nullish(),
        args: z.unknown().optional(),
      },
      { error: 'tool_call must be an object' },
    )
    .nullish(),
  tool_result: z
    .looseObject(
      {
        tool_use_id: z.string({ error: 'tool_result.tool_use_id must be a string' }).nullish(),
        name: z.string({ error: 'tool_result.name must be a string' }).nullish(),
      },
      { error: 'tool_result must be an object' },
    )
    .nullish(),
});

export type MeerkatInvocation = z.infer<typeof meerkatInvocationSchema>;

/** The agent name meerkat invocations are recorded under. */
export const MEERKAT_AGENT = 'meerkat';

/** meerkat's point names (all accepted by `resolvePoint`, as canonical names or aliases). */
export const MEERKAT_POINTS = [
  'run_started',
  'run_completed',
  'run_failed',
  'pre_llm_request',
  'post_llm_response',
  'pre_tool_execution',
  'post_tool_execution',
  'turn_boundary',
] as const;

/** The hookledger point for a meerkat point name; `other` for a name a newer meerkat added. */
export function pointForMeerkat(name: string): Point {
  return (MEERKAT_POINTS as readonly string[]).includes(name) ? resolvePoint(name)! : 'other';
}

/** The point name of a payload that may not validate, so a failure answer can still name it. */
export function meerkatPointOf(payload: unknown): string | null {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return null;
  const point = (payload as { point?: unknown }).point;
  return typeof point === 'string' && point !== '' ? point : null;
}

/**
 * Maps a meerkat invocation to a canonical one, keeping meerkat's point name as `eventName`
 * and the payload verbatim as `raw`. The tool call's `args` are the (modifiable) tool input
 * and its `name` the tool name matchers apply to; an LLM request is the input of
 * `pre_llm_request` and an LLM response the result of `post_llm_response`, so hooks see them
 * where they see a tool's.
 */
export function invocationFromMeerkat(payload: unknown, where = 'meerkat invocation'): InvocationInput {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
    throw new InputError(`${where}: expected a JSON object`);
  }
  const parsed = meerkatInvocationSchema.safeParse(payload);
  if (!parsed.success) throw new InputError(`${where}: ${formatIssues(parsed.error)}`);
  const p = parsed.data;
  const meta: Record<string, unknown> = {};
  if (p.error_class) meta.errorClass = p.error_class;
  return {
    point: pointForMeerkat(p.point),
    eventName: p.point,
    sessionId: p.session_id ?? null,
    turn: p.turn_number ?? null,
    toolName: p.tool_call?.name ?? p.tool_result?.name ?? null,
    toolUseId: p.tool_call?.tool_use_id ?? p.tool_result?.tool_use_id ?? null,
    toolInput: p.tool_call ? (p.tool_call.args ?? null) : (p.llm_request ?? null),
    toolResponse: p.tool_result ?? p.llm_response ?? null,
    prompt: p.prompt ?? null,
    error: p.error_report ?? p.error ?? null,
    agent: MEERKAT_AGENT,
    cwd: null,
    meta,
    raw: payload,
  };
}
