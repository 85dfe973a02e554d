import * as z from 'zod';
import { pointSchema, type Point } from './points.js';
import { describeThrown, InputError } from './errors.js';
import { frozenCopy, isPlainObject } from './frozen.js';

/**
 * The canonical invocation (docs/design.md §8): one lifecycle event handed to the runner.
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

/**
 * The invocation as hooks receive it: a deep, frozen copy, shared by every hook of the pass
 * (domain/frozen.ts says why). Throws InputError when part of it cannot be read.
 */
export function frozenInvocation(invocation: Invocation, where = 'invocation'): Invocation {
  try {
    return frozenCopy(invocation);
  } catch (error) {
    throw new InputError(`${where}: could not be read (${describeThrown(error)})`);
  }
}

/** Returns a frozen copy of the invocation with its modifiable input replaced (see `modifyProblem`). */
export function withModifiedInput(invocation: Invocation, input: unknown): Invocation {
  if (invocation.point === 'user_prompt_submit') {
    return Object.freeze({ ...invocation, prompt: typeof input === 'string' ? input : JSON.stringify(input) });
  }
  return Object.freeze({ ...invocation, toolInput: frozenCopy(input) });
}

/** Points where something has not happened yet, so its input can still be rewritten. */
const MODIFIABLE_POINTS: ReadonlySet<Point> = new Set<Point>([
  'pre_tool_use',
  'permission_request',
  'user_prompt_submit',
  'pre_llm_request',
]);

/**
 * Why a `modify` cannot apply to this invocation, or null when it can. A replacement must be
 * something the agent can take in place of the original: a prompt is a string, an object tool
 * input stays an object (Claude Code rejects any other `updatedInput` and then ignores the
 * whole answer), and after the fact (a tool's result, a session start) there is nothing to rewrite.
 */
export function modifyProblem(invocation: Invocation, input: unknown): string | null {
  if (!MODIFIABLE_POINTS.has(invocation.point)) {
    return `input: nothing can be modified at ${invocation.point} (modify rewrites a tool input before the tool runs, or a prompt)`;
  }
  if (invocation.point === 'user_prompt_submit') {
    return typeof input === 'string' ? null : 'input: a replacement prompt must be a string';
  }
  if (isPlainObject(invocation.toolInput) && !isPlainObject(input)) {
    return 'input: a replacement tool input must be an object, as the original is';
  }
  return null;
}
