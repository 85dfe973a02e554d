import { z } from 'zod';

/** Any JSON value. Hook inputs and payloads are arbitrary JSON. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** Accepts anything JSON.stringify would keep; used where the shape is the agent's business. */
export const jsonValueSchema: z.ZodType<JsonValue> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(jsonValueSchema), z.record(z.string(), jsonValueSchema)]),
);

/** A JSON object (record of JSON values). */
export const jsonObjectSchema = z.record(z.string(), z.unknown());
