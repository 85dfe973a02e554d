import type { z } from 'zod';
import { InputError } from '../domain/errors.js';
import { formatIssues } from '../domain/results.js';

/** Helpers shared by the adapters of agents with a Claude-like hook payload (Codex, Gemini CLI). */

/** The event name of a payload that may not validate, so the answer can still use that event's form. */
export function eventNameOf(payload: unknown): string | null {
  if (!isRecord(payload)) return null;
  const name = payload.hook_event_name;
  return typeof name === 'string' && name !== '' ? name : null;
}

/** Checks that a payload is an object that passes `schema`, with one line naming the field. */
export function parsePayload<S extends z.ZodType>(schema: S, payload: unknown, where: string): z.output<S> {
  if (!isRecord(payload)) throw new InputError(`${where}: expected a JSON object`);
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new InputError(`${where}: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
