import * as z from 'zod';
import { lazySchema } from './lazy-schema.js';

/** Reason codes a deny carries (docs/design.md §3). The last two are produced by the runner. */
export const REASON_CODES = ['policy_violation', 'safety_violation', 'schema_violation', 'timeout', 'runtime_error'] as const;
export type ReasonCode = (typeof REASON_CODES)[number];
export const reasonCodeSchema = z.enum(REASON_CODES);

/** Optional text for the agent's context (Claude Code `additionalContext`), allowed on every result. */
const contextField = () => ({ additionalContext: z.string().optional() });

/**
 * A replacement input that an `allow` or `ask` may carry (Claude Code's `updatedInput` next to
 * a permission decision): the rewrite is applied as a `modify` would be, and the decision still
 * counts. Without it, a wrapped Claude hook that rewrites and asks would lose one half.
 */
const replacementField = () => ({ input: z.unknown().optional() });

// Each built on first use (domain/lazy-schema.ts): a hook answers with one decision.
export const allowResultSchema = lazySchema(() =>
  z.strictObject({
    decision: z.literal('allow'),
    message: z.string().optional(),
    ...replacementField(),
    ...contextField(),
  }),
);
export const denyResultSchema = lazySchema(() =>
  z.strictObject({
    decision: z.literal('deny'),
    reasonCode: reasonCodeSchema.default('policy_violation'),
    message: z.string().min(1, 'a deny needs a message saying why'),
    payload: z.unknown().optional(),
    ...contextField(),
  }),
);
export const askResultSchema = lazySchema(() =>
  z.strictObject({
    decision: z.literal('ask'),
    message: z.string().min(1, 'an ask needs a message for the user'),
    ...replacementField(),
    ...contextField(),
  }),
);
export const modifyResultSchema = lazySchema(() =>
  z.strictObject({
    decision: z.literal('modify'),
    /** The replacement tool input (an object) or prompt (a string). */
    input: z.unknown().refine((v) => v !== undefined, 'a modify needs the replacement input'),
    reason: z.string().optional(),
    ...contextField(),
  }),
);
export const observeResultSchema = lazySchema(() =>
  z.strictObject({
    decision: z.literal('none').optional(),
    ...contextField(),
  }),
);

/** What a hook may return, by decision. `undefined`/`null`/`{}` mean "no opinion". */
const resultSchemas = {
  allow: allowResultSchema,
  deny: denyResultSchema,
  ask: askResultSchema,
  modify: modifyResultSchema,
  none: observeResultSchema,
} as const;

/** A hook's answer as the hook author writes it. */
export type HookResultInput =
  | undefined
  | null
  | void
  | z.input<ReturnType<typeof allowResultSchema>>
  | z.input<ReturnType<typeof denyResultSchema>>
  | z.input<ReturnType<typeof askResultSchema>>
  | z.input<ReturnType<typeof modifyResultSchema>>
  | z.input<ReturnType<typeof observeResultSchema>>;

/** A validated hook result; `none` stands for "no opinion". */
export type HookResult =
  | { decision: 'none'; additionalContext?: string }
  | z.output<ReturnType<typeof allowResultSchema>>
  | z.output<ReturnType<typeof denyResultSchema>>
  | z.output<ReturnType<typeof askResultSchema>>
  | z.output<ReturnType<typeof modifyResultSchema>>;

export type ReturnedDecision = HookResult['decision'];

/** What a hook can answer, as an outcome records it (`none`: no opinion). */
export const RETURNED_DECISIONS = ['allow', 'deny', 'ask', 'modify', 'none'] as const satisfies readonly ReturnedDecision[];

/** Final decision of an invocation (docs/design.md §4). */
export const DECISIONS = ['allow', 'deny', 'ask', 'none'] as const;
export type Decision = (typeof DECISIONS)[number];

/**
 * Validates a raw hook answer. Dispatches on `decision` first so that the issues name
 * the field that is wrong rather than "no union member matched".
 */
export function parseHookResult(value: unknown): { ok: true; result: HookResult } | { ok: false; issues: string } {
  if (value === undefined || value === null) return { ok: true, result: { decision: 'none' } };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, issues: `expected nothing or an object with a decision (allow, deny, ask, modify), got ${describe(value)}` };
  }
  const decision = (value as { decision?: unknown }).decision ?? 'none';
  if (typeof decision !== 'string' || !(decision in resultSchemas)) {
    return { ok: false, issues: `decision: expected allow, deny, ask, modify or none, got ${describe(decision)}` };
  }
  const parsed = resultSchemas[decision as keyof typeof resultSchemas]().safeParse(value);
  if (!parsed.success) return { ok: false, issues: formatIssues(parsed.error) };
  const result = parsed.data;
  if (result.decision === undefined) {
    return {
      ok: true,
      result: result.additionalContext ? { decision: 'none', additionalContext: result.additionalContext } : { decision: 'none' },
    };
  }
  return { ok: true, result: result as HookResult };
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/** One-line rendering of zod issues: `path: message; path: message`. */
export function formatIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.length > 0 ? issue.path.join('.') : '(root)';
      return `${path}: ${issueMessage(issue)}`;
    })
    .join('; ');
}

/** "Invalid input" says nothing: for a union, report what the first alternative objected to. */
export function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_union') {
    const inner = issue.errors.flat()[0];
    if (inner) return inner.message;
  }
  return issue.message;
}

/** The replacement input a result carries (`modify`, or an `allow`/`ask` with `input`), else undefined. */
export function replacementOf(result: HookResult): unknown {
  return result.decision === 'modify' || result.decision === 'allow' || result.decision === 'ask' ? result.input : undefined;
}

/** Builders for in-process hooks. */
export const allow = (message?: string): HookResultInput => ({ decision: 'allow', ...(message ? { message } : {}) });
export const deny = (message: string, reasonCode: ReasonCode = 'policy_violation', payload?: unknown): HookResultInput => ({
  decision: 'deny',
  reasonCode,
  message,
  ...(payload !== undefined ? { payload } : {}),
});
export const ask = (message: string): HookResultInput => ({ decision: 'ask', message });
export const modify = (input: unknown, reason?: string): HookResultInput => ({
  decision: 'modify',
  input,
  ...(reason ? { reason } : {}),
});
