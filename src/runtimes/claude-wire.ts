import * as z from 'zod';
import type { Invocation } from '../domain/invocation.js';
import { POINT_CLAUDE_EVENTS, type Point } from '../domain/points.js';
import type { HookResultInput } from '../domain/results.js';
import { HookExecutionFailure, type RuntimeContext } from './types.js';
import { oneLine } from '../domain/text.js';
import { lazySchema } from '../domain/lazy-schema.js';

/**
 * The Claude Code hook wire protocol, both directions, as hookledger's command and http
 * runtimes (and later the Claude Code adapter) speak it. See
 * reference/claude-code-hooks.md sections 4 to 6.
 */

/** Claude Code caps every hook output string (additionalContext, plain stdout) at this many characters. */
export const CLAUDE_TEXT_LIMIT = 10_000;
/** An exit-2 reason taken from stderr is capped so one noisy hook cannot bloat the ledger. */
const STDERR_REASON_LIMIT = 2000;
/** Failure details keep only the start of stderr: enough to diagnose, small enough to store. */
const STDERR_EXCERPT_LIMIT = 500;

/**
 * Points where a deny means "keep working" (Stop, SubagentStop block the stop), the opposite
 * of what `continue: false` asks for.
 */
const STOP_POINTS: ReadonlySet<Point> = new Set<Point>(['stop', 'subagent_stop']);

/** Points where Claude Code adds a hook's plain-text stdout to the model's context. */
const PLAIN_TEXT_CONTEXT_POINTS: ReadonlySet<Point> = new Set<Point>(['user_prompt_submit', 'session_start', 'user_prompt_expansion']);

/**
 * Fields whose values come from the invocation rather than from `raw`: earlier hooks in the
 * pass may have changed them (tool_input, prompt), so raw's copy can be stale.
 */
const CANONICAL_FIELDS = [
  'session_id',
  'hook_event_name',
  'cwd',
  'tool_name',
  'tool_input',
  'tool_use_id',
  'tool_response',
  'prompt',
  'error',
] as const;

/** What a finished hook process left behind. */
export interface ProcessOutput {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
}

/** Agents whose hook scripts expect the agent's own event names (Codex's are Claude Code's; Gemini CLI's are its own). */
const OWN_EVENT_AGENTS = /^(claude-code|codex|gemini-cli)(\/|$)/;

/**
 * The `hook_event_name` a hook is told: the agent's own event name when the invocation came
 * from Claude Code (so unknown events round-trip), else the Claude name of the point, else
 * the point name itself (hookledger-only points such as `pre_llm_request`). Codex and Gemini
 * CLI events keep their own names too, so scripts imported from those agents see what they expect.
 */
export function claudeEventName(invocation: Invocation): string {
  if (invocation.eventName && OWN_EVENT_AGENTS.test(invocation.agent ?? '')) return invocation.eventName;
  return POINT_CLAUDE_EVENTS[invocation.point] ?? invocation.point;
}

/**
 * Builds the JSON a command hook reads on stdin (and an http hook receives as its body), in
 * Claude Code's snake_case shape. When `raw` is a Claude payload its other fields (e.g.
 * `transcript_path`, `permission_mode`) are passed through, but the canonical fields always
 * come from the invocation so the hook sees the input as modified by earlier hooks; null
 * canonical fields are omitted. A `hookledger` object tells scripts which invocation and
 * hook this is and whether it is a replay (Claude Code ignores unknown fields).
 */
export function toClaudePayload(invocation: Invocation, ctx: RuntimeContext): Record<string, unknown> {
  const payload: Record<string, unknown> = isClaudeRaw(invocation) ? { ...(invocation.raw as Record<string, unknown>) } : {};
  const current: Record<(typeof CANONICAL_FIELDS)[number], unknown> = {
    session_id: invocation.sessionId,
    hook_event_name: claudeEventName(invocation),
    cwd: invocation.cwd,
    tool_name: invocation.toolName,
    tool_input: invocation.toolInput,
    tool_use_id: invocation.toolUseId,
    tool_response: invocation.toolResponse,
    prompt: invocation.prompt,
    error: invocation.error,
  };
  for (const field of CANONICAL_FIELDS) {
    const value = current[field];
    if (value === null || value === undefined) delete payload[field];
    else payload[field] = value;
  }
  payload.hookledger = { invocationId: ctx.invocationId, hookId: ctx.hookId, replay: ctx.replay, point: invocation.point };
  return payload;
}

/** Only a Claude payload's keys belong in a Claude-shaped message; another agent's raw event would add noise. */
function isClaudeRaw(invocation: Invocation): boolean {
  const raw = invocation.raw;
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return false;
  return invocation.agent?.startsWith('claude-code') || typeof (raw as Record<string, unknown>).hook_event_name === 'string';
}

// ---------------------------------------------------------------------------------------
// Hook output → hookledger result
// ---------------------------------------------------------------------------------------

/** Zod error text that names what was expected and what arrived, e.g. `expected one of allow, deny, got "block"`. */
const expected = (what: string) => ({ error: (issue: { input?: unknown }) => `expected ${what}, got ${describeValue(issue.input)}` });

const text = () => z.string(expected('a string')).nullish();
const jsonObject = () => z.record(z.string(), z.unknown(), expected('an object')).nullish();

/**
 * Claude Code's JSON hook output (section 6). Loose, every field optional: the protocol
 * grows with each release and unknown fields must not fail a hook. `null` counts as absent
 * because scripts often print `None`/`null` for "not set". Built on first use (domain/lazy-schema.ts):
 * only Claude-protocol command and http hooks need it.
 */
export const claudeHookOutputSchema = lazySchema(() => {
  /** PermissionRequest's `hookSpecificOutput.decision` object. */
  const permissionRequestDecisionSchema = z.looseObject(
    {
      behavior: z.enum(['allow', 'deny'], expected('one of allow, deny')),
      updatedInput: jsonObject(),
      message: text(),
      interrupt: z.boolean(expected('a boolean')).nullish(),
    },
    expected('an object'),
  );
  const hookSpecificOutputSchema = z.looseObject(
    {
      hookEventName: text(),
      permissionDecision: z.enum(['allow', 'deny', 'ask', 'defer'], expected('one of allow, deny, ask, defer')).nullish(),
      permissionDecisionReason: text(),
      updatedInput: jsonObject(),
      additionalContext: text(),
      decision: permissionRequestDecisionSchema.nullish(),
      worktreePath: text(),
    },
    expected('an object'),
  );
  return z.looseObject({
    continue: z.boolean(expected('a boolean')).nullish(),
    stopReason: text(),
    suppressOutput: z.boolean(expected('a boolean')).nullish(),
    systemMessage: text(),
    // block/approve are Claude Code's; deny/allow/ask are Gemini CLI's flat form (scripts imported by import-gemini).
    decision: z.enum(['block', 'approve', 'deny', 'allow', 'ask'], expected('one of block, approve, deny, allow, ask')).nullish(),
    reason: text(),
    additionalContext: text(),
    hookSpecificOutput: hookSpecificOutputSchema.nullish(),
  });
});
export type ClaudeHookOutput = z.output<ReturnType<typeof claudeHookOutputSchema>>;

/**
 * Fields Claude Code only honours inside `hookSpecificOutput`. At the top level it ignores
 * them silently (anthropics/claude-code#4669), so a hook author's deny would quietly become
 * an allow; hookledger reports it instead.
 */
const NESTED_ONLY_FIELDS = ['permissionDecision', 'permissionDecisionReason', 'updatedInput'] as const;

/**
 * Parses hook output text as JSON, failing with `invalid_result` and the start of the text
 * so the ledger shows what the hook actually printed. `what` names the source ("stdout").
 */
export function parseJsonOutput(textValue: string, what: string): unknown {
  try {
    return JSON.parse(textValue) as unknown;
  } catch (error) {
    const start = textValue.trimStart().slice(0, 80);
    throw new HookExecutionFailure('invalid_result', `${what} is not valid JSON: ${(error as Error).message}; starts with: ${start}`);
  }
}

/**
 * Maps a parsed Claude Code JSON hook answer (exit-0 stdout or a 2xx http body) to the raw
 * hookledger result that `parseHookResult` validates. Precedence: `continue: false` stops
 * everything (deny; on Stop/SubagentStop no opinion, see below); then the most restrictive of permissionDecision, legacy top-level
 * decision and PermissionRequest's behavior (deny > ask > allow; `defer` is no opinion);
 * deny and ask win over `updatedInput`, which otherwise becomes `modify`.
 * Throws `HookExecutionFailure('invalid_result')` naming the field when the shape is wrong.
 */
export function readClaudeJsonOutput(value: unknown, point: Point, hookId?: string, what = 'hook output'): HookResultInput {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new HookExecutionFailure('invalid_result', `${what}: expected a JSON object, got ${describeValue(value)}`);
  }
  const parsed = claudeHookOutputSchema().safeParse(value);
  if (!parsed.success) throw new HookExecutionFailure('invalid_result', `${what}: ${outputIssues(parsed.error)}`);
  const out = parsed.data;
  const specific = out.hookSpecificOutput ?? undefined;
  const record = value as Record<string, unknown>;
  for (const field of NESTED_ONLY_FIELDS) {
    if (record[field] !== undefined && record[field] !== null && specific?.[field] == null) {
      throw new HookExecutionFailure(
        'invalid_result',
        `${what}: ${field} must be inside hookSpecificOutput (Claude Code ignores it at the top level)`,
      );
    }
  }

  const context = joinContext(specific?.additionalContext, out.additionalContext);
  const extra = context !== undefined ? { additionalContext: context } : {};
  const who = hookId ? `hook "${hookId}"` : 'the hook';

  if (out.continue === false && STOP_POINTS.has(point)) {
    // A deny here would block the stop, i.e. keep Claude working: the inverse of "stop Claude
    // entirely". Letting the stop happen is the nearest reading; the reason stays on record.
    const why = nonBlank(out.stopReason);
    const note = `${who} asked Claude to stop (continue: false)${why !== undefined ? `: ${why}` : ''}`;
    return { additionalContext: joinContext(context, note)! };
  }
  if (out.continue === false) {
    return {
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: nonBlank(out.stopReason) ?? `${who} asked to stop (continue: false)`,
      ...extra,
    };
  }

  const permissionRequest = specific?.decision ?? undefined;
  const verdicts: Array<'allow' | 'deny' | 'ask'> = [];
  if (specific?.permissionDecision && specific.permissionDecision !== 'defer') verdicts.push(specific.permissionDecision);
  if (out.decision === 'block' || out.decision === 'deny') verdicts.push('deny');
  if (out.decision === 'approve' || out.decision === 'allow') verdicts.push('allow');
  if (out.decision === 'ask') verdicts.push('ask');
  if (permissionRequest) verdicts.push(permissionRequest.behavior);
  const verdict = verdicts.includes('deny') ? 'deny' : verdicts.includes('ask') ? 'ask' : verdicts.includes('allow') ? 'allow' : undefined;

  const reason = nonBlank(specific?.permissionDecisionReason) ?? nonBlank(out.reason);
  const worktreePath = point === 'worktree_create' ? nonBlank(specific?.worktreePath) : undefined;
  if (verdict === undefined && worktreePath !== undefined) return { decision: 'allow', message: worktreePath.trim(), ...extra };
  if (verdict === 'deny') {
    const message =
      nonBlank(permissionRequest?.behavior === 'deny' ? permissionRequest.message : undefined) ?? reason ?? `denied by ${who}`;
    const payload = permissionRequest?.behavior === 'deny' && permissionRequest.interrupt === true ? { payload: { interrupt: true } } : {};
    return { decision: 'deny', reasonCode: 'policy_violation', message: capText(message), ...payload, ...extra };
  }
  // updatedInput next to allow or ask keeps both halves (the rewrite, and the approval or the
  // question about the rewritten call); on its own it is a modify.
  const updatedInput = specific?.updatedInput ?? permissionRequest?.updatedInput ?? undefined;
  const rewrite = updatedInput !== undefined ? { input: updatedInput } : {};
  if (verdict === 'ask') {
    return { decision: 'ask', message: capText(reason ?? `${who} asks for confirmation`), ...rewrite, ...extra };
  }
  if (verdict === 'allow') return { decision: 'allow', ...(reason ? { message: capText(reason) } : {}), ...rewrite, ...extra };
  if (updatedInput !== undefined) {
    return { decision: 'modify', input: updatedInput, ...(reason ? { reason: capText(reason) } : {}), ...extra };
  }
  return context !== undefined ? { additionalContext: context } : undefined;
}

/** The first few issues of a hook answer that failed its schema, each naming the field, on one line. */
export function outputIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`)
    .join('; ');
}

/**
 * Turns a finished command hook into the raw hookledger result, following Claude Code's exit
 * code contract (section 5): exit 2 denies with stderr as the reason; exit 0 with stdout
 * starting `{` is JSON output; exit 0 plain text is no opinion except where Claude adds it to
 * the context; any other exit or a signal is `execution_failed`.
 */
export function readClaudeHookOutput(output: ProcessOutput, point: Point, hookId?: string): HookResultInput {
  if (output.signal !== null) {
    throw new HookExecutionFailure('execution_failed', withExcerpt(`killed by ${output.signal}`, output.stderr));
  }
  if (output.exitCode === 2) return readExit2(output, hookId);
  if (output.exitCode !== 0) {
    throw new HookExecutionFailure(
      'execution_failed',
      withExcerpt(output.exitCode === null ? 'exited without a status' : `exited with code ${output.exitCode}`, output.stderr),
    );
  }
  const stdout = output.stdout.trim();
  if (stdout === '') return undefined;
  if (stdout.startsWith('{')) return readClaudeJsonOutput(parseJsonOutput(stdout, 'stdout'), point, hookId, 'stdout JSON');
  if (PLAIN_TEXT_CONTEXT_POINTS.has(point)) return { additionalContext: capText(stdout) };
  // A WorktreeCreate hook made the worktree and prints its path last: that is its approval.
  if (point === 'worktree_create') return { decision: 'allow', message: stdout.split('\n').pop()!.trim() };
  return undefined;
}

/**
 * Exit 2 always denies (the exit code outranks any JSON allow, as in Claude Code); a reason
 * in stdout JSON is preferred over stderr. Broken JSON is ignored rather than failing the
 * hook: the script's intent to block is unambiguous.
 */
function readExit2(output: ProcessOutput, hookId: string | undefined): HookResultInput {
  let reason: string | undefined;
  let context: string | undefined;
  const stdout = output.stdout.trim();
  if (stdout.startsWith('{')) {
    try {
      const json = JSON.parse(stdout) as unknown;
      if (json !== null && typeof json === 'object' && !Array.isArray(json)) {
        const top = json as Record<string, unknown>;
        const specific = isRecord(top.hookSpecificOutput) ? top.hookSpecificOutput : {};
        const permissionRequest = isRecord(specific.decision) ? specific.decision : {};
        reason = [specific.permissionDecisionReason, permissionRequest.message, top.reason, top.stopReason]
          .map((v) => (typeof v === 'string' ? nonBlank(v) : undefined))
          .find((v) => v !== undefined);
        context = joinContext(
          typeof specific.additionalContext === 'string' ? specific.additionalContext : undefined,
          typeof top.additionalContext === 'string' ? top.additionalContext : undefined,
        );
      }
    } catch {
      // Not JSON after all: fall back to stderr below.
    }
  }
  const stderr = output.stderr.trim();
  const message =
    reason !== undefined
      ? capText(reason)
      : stderr !== ''
        ? stderr.slice(0, STDERR_REASON_LIMIT)
        : `${hookId ? `hook "${hookId}"` : 'hook'} exited 2`;
  return { decision: 'deny', reasonCode: 'policy_violation', message, ...(context !== undefined ? { additionalContext: context } : {}) };
}

/** `head: first 500 chars of stderr`, whitespace collapsed so the detail stays one line. */
function withExcerpt(head: string, stderr: string): string {
  const excerpt = stderrExcerpt(stderr);
  return excerpt === '' ? head : `${head}: ${excerpt}`;
}

/** The start of a hook's stderr on one line, for failure details. */
export function stderrExcerpt(stderr: string, limit = STDERR_EXCERPT_LIMIT): string {
  return oneLine(stderr).slice(0, limit);
}

function joinContext(...parts: Array<string | null | undefined>): string | undefined {
  const present = parts.filter((p): p is string => typeof p === 'string' && p.trim() !== '');
  return present.length > 0 ? capText(present.join('\n\n')) : undefined;
}

function capText(value: string): string {
  return value.length > CLAUDE_TEXT_LIMIT ? value.slice(0, CLAUDE_TEXT_LIMIT) : value;
}

/** A blank reason is no reason: a deny or ask would then fail validation for an empty message. */
function nonBlank(value: string | null | undefined): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${String(value)}`;
}
