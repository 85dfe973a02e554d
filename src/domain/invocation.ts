import { z } from 'zod';
import { pointSchema, type Point } from './points.js';

/**
 * The canonical invocation (DESIGN section 8): one lifecycle event handed to the runner.
 * Only `point` is required. Unknown keys are rejected so that a typo (`tool_name`) is
 * reported rather than silently ignored; adapters keep the agent's own payload in `raw`.
 */
export const invocationSchema = z.strictObject({
  point: pointSchema,
  /** The agent's own event name when it differs from the point (e.g. `PreToolUse`, or an unknown event). */
  eventName: z.string().nullish(),
  sessionId: z.string().nullish(),
  turn: z.number().int().nonnegative().nullish(),
  toolName: z.string().nullish(),
  toolUseId: z.string().nullish(),
  toolInput: z.unknown().optional(),
  toolResponse: z.unknown().optional(),
  prompt: z.string().nullish(),
  error: z.unknown().optional(),
  agent: z.string().nullish(),
  cwd: z.string().nullish(),
  meta: z.record(z.string(), z.unknown()).nullish(),
  raw: z.unknown().optional(),
});

/** What callers pass in: point names may be aliases. */
export type InvocationInput = z.input<typeof invocationSchema>;

/** A validated invocation with every optional field normalised to `null`. */
export interface Invocation {
  point: Point;
  eventName: string | null;
  sessionId: string | null;
  turn: number | null;
  toolName: string | null;
  toolUseId: string | null;
  toolInput: unknown;
  toolResponse: unknown;
  prompt: string | null;
  error: unknown;
  agent: string | null;
  cwd: string | null;
  meta: Record<string, unknown>;
  raw: unknown;
}

/** Fills the nullable fields so downstream code never distinguishes undefined from null. */
export function normaliseInvocation(parsed: z.output<typeof invocationSchema>): Invocation {
  return {
    point: parsed.point,
    eventName: parsed.eventName ?? null,
    sessionId: parsed.sessionId ?? null,
    turn: parsed.turn ?? null,
    toolName: parsed.toolName ?? null,
    toolUseId: parsed.toolUseId ?? null,
    toolInput: parsed.toolInput ?? null,
    toolResponse: parsed.toolResponse ?? null,
    prompt: parsed.prompt ?? null,
    error: parsed.error ?? null,
    agent: parsed.agent ?? null,
    cwd: parsed.cwd ?? null,
    meta: parsed.meta ?? {},
    raw: parsed.raw ?? null,
  };
}

/**
 * The part of an invocation a `modify` result replaces: the prompt at `user_prompt_submit`,
 * the tool input everywhere else.
 */
export function modifiableInput(invocation: Invocation): unknown {
  return invocation.point === 'user_prompt_submit' ? invocation.prompt : invocation.toolInput;
}

/** Returns a copy of the invocation with its modifiable input replaced. */
export function withModifiedInput(invocation: Invocation, input: unknown): Invocation {
  if (invocation.point === 'user_prompt_submit') {
    return { ...invocation, prompt: typeof input === 'string' ? input : JSON.stringify(input) };
  }
  return { ...invocation, toolInput: input };
}
