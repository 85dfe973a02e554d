import type { Report } from '../domain/outcomes.js';
import type { ReasonCode } from '../domain/results.js';
import { confirmationRequiredText, couldNotDecideText, decisionText, decisiveHook, rewriteRefusedText } from './answer-text.js';

/**
 * Report → meerkat's hook answer (reference/meerkat-wire.md, "The answer"). Pure: the
 * command adapter prints it, the server sends it as the body.
 */

/** meerkat's `[hooks] payload_max_bytes` default: a larger answer fails the hook. */
export const MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES = 128 * 1024;

/** The decision object meerkat reads; `hook_id` is overwritten by meerkat with its entry id. */
export type MeerkatDecision =
  { decision: 'allow' } | { decision: 'deny'; hook_id: string; reason_code: ReasonCode; message: string; payload?: unknown };

/** The whole answer: exactly one optional key, because meerkat rejects any other. */
export interface MeerkatAnswer {
  decision?: MeerkatDecision;
}

/**
 * Builds the answer for a report, within `maxBytes` of JSON. The mapping (docs/meerkat.md):
 * - deny → deny with the decisive hook's reason code, a message naming the hook and the
 *   ledger record, and the hook's payload (meerkat overwrites `hook_id`, so the name must
 *   travel in the message too);
 * - ask → deny: meerkat cannot ask, and the message says confirmation was required;
 * - a rewritten input (modify, or an allow carrying one) with no deny → deny naming the
 *   rewrite: meerkat cannot take a rewritten input, and running the original would ignore
 *   the guardrail;
 * - allow → allow; no decision → `{}`.
 */
export function meerkatAnswer(report: Report, pointName: string, maxBytes = MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES): MeerkatAnswer {
  const modified = report.modifiedInput !== null && report.modifiedInput !== undefined;
  if (report.decision === 'deny') {
    const decisive = report.outcomes.find((o) => o.decisive);
    return fitToSize(
      denyAnswer(decisiveHook(report), report.reasonCode ?? 'policy_violation', decisionText(report), decisive?.payload),
      maxBytes,
    );
  }
  if (report.decision === 'ask') {
    return fitToSize(
      denyAnswer(decisiveHook(report), 'policy_violation', confirmationRequiredText(report, 'meerkat', pointName)),
      maxBytes,
    );
  }
  if (modified) {
    const what =
      report.point === 'pre_llm_request' ? 'the LLM request' : report.point === 'user_prompt_submit' ? 'the prompt' : 'the tool input';
    return fitToSize(denyAnswer(decisiveHook(report), 'policy_violation', rewriteRefusedText(report, 'meerkat', what)), maxBytes);
  }
  if (report.decision === 'allow') return { decision: { decision: 'allow' } };
  return {};
}

/**
 * The answer when hookledger itself cannot decide (bad input, config, ledger): under the
 * `deny` policy a deny with `runtime_error` naming the problem; under `allow`, no decision.
 * Never an error exit or status: meerkat fails the whole run on those.
 */
export function meerkatFailureAnswer(
  problem: string,
  policy: 'deny' | 'allow',
  maxBytes = MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES,
): MeerkatAnswer {
  if (policy === 'allow') return {};
  return fitToSize(denyAnswer('hookledger', 'runtime_error', couldNotDecideText(problem)), maxBytes);
}

function denyAnswer(hookId: string, reasonCode: ReasonCode, message: string, payload?: unknown): MeerkatAnswer {
  return {
    decision: {
      decision: 'deny',
      hook_id: hookId,
      reason_code: reasonCode,
      message,
      ...(payload !== undefined && payload !== null ? { payload } : {}),
    },
  };
}

/**
 * Keeps an answer within meerkat's byte limit, which would otherwise fail the hook (and the
 * run): first the hook's payload is replaced by a note of its size, then the message is cut.
 * The full payload and message are in the ledger.
 */
export function fitToSize(answer: MeerkatAnswer, maxBytes: number): MeerkatAnswer {
  const size = (a: MeerkatAnswer) => Buffer.byteLength(JSON.stringify(a));
  if (size(answer) <= maxBytes || answer.decision?.decision !== 'deny') return answer;
  let decision = answer.decision;
  if (decision.payload !== undefined) {
    const bytes = Buffer.byteLength(JSON.stringify(decision.payload));
    decision = { ...decision, payload: { hookledger_omitted: `payload of ${bytes} bytes left out to fit payload_max_bytes ${maxBytes}` } };
    if (size({ decision }) > maxBytes)
      decision = { decision: 'deny', hook_id: decision.hook_id, reason_code: decision.reason_code, message: decision.message };
  }
  const over = size({ decision }) - maxBytes;
  if (over > 0) {
    // Cut by characters until the bytes fit (a multi-byte character counts more than one).
    let message = decision.message;
    while (message.length > 0 && size({ decision: { ...decision, message: `${message}…` } }) > maxBytes) {
      message = message.slice(0, Math.max(0, message.length - Math.max(over, 16)));
    }
    decision = { ...decision, message: `${message}…` };
  }
  return { decision };
}
