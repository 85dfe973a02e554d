import * as z from 'zod';
import type { Invocation } from '../domain/invocation.js';
import type { Point } from '../domain/points.js';
import { REASON_CODES, type HookResultInput } from '../domain/results.js';
import { oneLine } from '../domain/text.js';
import { outputIssues, parseJsonOutput, stderrExcerpt, type ProcessOutput } from './claude-wire.js';
import { HookExecutionFailure } from './types.js';

/**
 * meerkat's external hook protocol as hookledger's command and http runtimes speak it
 * (`protocol: "meerkat"`), so meerkat command-hook scripts run unchanged inside a hook set:
 * the invocation JSON on stdin (or as the POST body), the answer `{}` or
 * `{"decision": ...}` on stdout (or as the 2xx body), and anything else a failure, as
 * meerkat itself treats it (reference/meerkat-wire.md).
 */

/** meerkat's name for a hookledger point; a point meerkat lacks keeps its own name. */
const MEERKAT_POINT_NAMES: Partial<Record<Point, string>> = {
  session_start: 'run_started',
  session_end: 'run_completed',
  error: 'run_failed',
  pre_tool_use: 'pre_tool_execution',
  post_tool_use: 'post_tool_execution',
};

/**
 * The invocation a meerkat hook reads. From a meerkat invocation its own JSON is passed on,
 * with the tool arguments (or LLM request) and prompt as earlier hooks in the pass left them;
 * from another agent's, an equivalent is built from the canonical fields. No field of
 * hookledger's own is added: the hook id and replay flag are in the environment
 * (HOOKLEDGER_HOOK_ID, HOOKLEDGER_REPLAY) for command hooks.
 */
export function toMeerkatPayload(invocation: Invocation): Record<string, unknown> {
  const raw = invocation.raw;
  if (invocation.agent === 'meerkat' && isRecord(raw) && typeof raw.point === 'string') {
    const payload: Record<string, unknown> = { ...raw };
    if (isRecord(payload.tool_call)) payload.tool_call = { ...payload.tool_call, args: invocation.toolInput };
    else if (payload.llm_request !== undefined) payload.llm_request = invocation.toolInput;
    if (invocation.prompt !== null) payload.prompt = invocation.prompt;
    return payload;
  }
  const payload: Record<string, unknown> = {
    point:
      invocation.eventName && invocation.agent === 'meerkat'
        ? invocation.eventName
        : (MEERKAT_POINT_NAMES[invocation.point] ?? invocation.point),
    session_id: invocation.sessionId ?? '',
  };
  if (invocation.turn !== null) payload.turn_number = invocation.turn;
  if (invocation.prompt !== null) payload.prompt = invocation.prompt;
  if (invocation.point === 'pre_llm_request' && invocation.toolInput !== null) payload.llm_request = invocation.toolInput;
  else if (invocation.toolName !== null && invocation.toolResponse === null) {
    payload.tool_call = { tool_use_id: invocation.toolUseId ?? '', name: invocation.toolName, args: invocation.toolInput };
  }
  if (invocation.toolName !== null && invocation.toolResponse !== null) {
    const response = invocation.toolResponse;
    payload.tool_result = {
      tool_use_id: invocation.toolUseId ?? '',
      name: invocation.toolName,
      ...(isRecord(response) ? response : { content: typeof response === 'string' ? response : JSON.stringify(response) }),
    };
  } else if (invocation.point === 'post_llm_response' && invocation.toolResponse !== null) {
    payload.llm_response = invocation.toolResponse;
  }
  if (invocation.error !== null) payload.error = typeof invocation.error === 'string' ? invocation.error : JSON.stringify(invocation.error);
  return payload;
}

const decisionSchema = z.discriminatedUnion(
  'decision',
  [
    z.strictObject({ decision: z.literal('allow') }),
    z.strictObject({
      decision: z.literal('deny'),
      hook_id: z.string().nullish(),
      reason_code: z.enum(REASON_CODES).nullish(),
      message: z.string().nullish(),
      payload: z.unknown().optional(),
    }),
  ],
  { error: 'decision.decision must be allow or deny' },
);

/** meerkat's answer: exactly one optional key, as meerkat itself reads it (`deny_unknown_fields`). */
const answerSchema = z.strictObject({ decision: decisionSchema.nullish() });

/**
 * A parsed meerkat answer (2xx body or exit-0 stdout) → the raw hookledger result. Anything
 * meerkat would reject (another key, an unknown reason code) is `invalid_result`.
 */
export function readMeerkatJsonOutput(value: unknown, hookId: string, what: string): HookResultInput {
  const parsed = answerSchema.safeParse(value);
  if (!parsed.success) throw new HookExecutionFailure('invalid_result', `${what}: ${outputIssues(parsed.error)}`);
  const decision = parsed.data.decision;
  if (!decision) return undefined;
  if (decision.decision === 'allow') return { decision: 'allow' };
  const message = decision.message?.trim() ? decision.message : `denied by hook "${hookId}"`;
  return {
    decision: 'deny',
    reasonCode: decision.reason_code ?? 'policy_violation',
    message,
    ...(decision.payload !== undefined ? { payload: decision.payload } : {}),
  };
}

/**
 * A finished meerkat command hook → the raw result: exit 0 with that JSON on stdout is the
 * answer; a non-zero exit, a signal, empty stdout or anything else on it is a failure, as
 * meerkat treats it (there is no exit-2 convention).
 */
export function readMeerkatHookOutput(output: ProcessOutput, hookId: string): HookResultInput {
  if (output.signal !== null) throw new HookExecutionFailure('execution_failed', withExcerpt(`killed by ${output.signal}`, output.stderr));
  if (output.exitCode !== 0) {
    throw new HookExecutionFailure(
      'execution_failed',
      withExcerpt(output.exitCode === null ? 'exited without a status' : `exited with code ${output.exitCode}`, output.stderr),
    );
  }
  const stdout = output.stdout.trim();
  if (stdout === '') throw new HookExecutionFailure('invalid_result', 'stdout is empty (a meerkat hook answers {} for no decision)');
  return readMeerkatJsonOutput(parseJsonOutput(stdout, 'stdout'), hookId, 'stdout JSON');
}

function withExcerpt(head: string, stderr: string): string {
  const excerpt = stderrExcerpt(stderr);
  return excerpt === '' ? head : `${head}: ${oneLine(excerpt)}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
