import type { Outcome } from '../domain/outcomes.js';
import type { Point } from '../domain/points.js';
import { capText, toJsonText } from './json-text.js';
import type { Redactor } from './redact.js';

/**
 * The redacted form in which decisions and outcomes are stored. Shared by the live write path
 * and replay: replay compares what it decides with what was stored, and stores its own results,
 * so both must be redacted by the same rules in the same way, or a redacted message would read
 * as a changed decision (and a replay would write in clear what the live path never stores).
 */

/** Where a point's modifiable input sits in the invocation, which path rules are written against. */
export function inputPathOf(point: Point): string[] {
  return point === 'user_prompt_submit' ? ['prompt'] : ['toolInput'];
}

/** A decision's message and modified input as stored, with the paths redaction replaced. */
export function storedDecision(
  redactor: Redactor,
  point: Point,
  result: { message: string | null; modifiedInput: unknown },
): { message: string | null; modifiedInputJson: string | null; paths: string[] } {
  const message = redactor.redactText(result.message, ['message']);
  const modifiedInput = redactor.redact(result.modifiedInput, ['modifiedInput'], inputPathOf(point));
  return {
    message: capText(message.value),
    modifiedInputJson: toJsonText(modifiedInput.value),
    paths: [...message.paths, ...modifiedInput.paths],
  };
}

/** The outcome as stored: hook-supplied text and values redacted; paths relative to the outcome. */
export function redactOutcome(redactor: Redactor, o: Outcome, inputPath: string[]): { outcome: Outcome; paths: string[] } {
  if (
    redactor.empty ||
    (o.message === null && o.payload === null && o.modifiedInput === null && o.additionalContext === null && o.failureDetail === null)
  ) {
    return { outcome: o, paths: [] };
  }
  const message = redactor.redactText(o.message, ['message']);
  const payload = redactor.redact(o.payload, ['payload']);
  const modifiedInput = redactor.redact(o.modifiedInput, ['modifiedInput'], inputPath);
  const additionalContext = redactor.redactText(o.additionalContext, ['additionalContext']);
  const failureDetail = redactor.redactText(o.failureDetail, ['failureDetail']);
  const paths = [...message.paths, ...payload.paths, ...modifiedInput.paths, ...additionalContext.paths, ...failureDetail.paths];
  if (paths.length === 0) return { outcome: o, paths };
  return {
    outcome: {
      ...o,
      message: message.value,
      payload: payload.value,
      modifiedInput: modifiedInput.value,
      additionalContext: additionalContext.value,
      failureDetail: failureDetail.value,
    },
    paths,
  };
}

/**
 * The redaction paths that touched the invocation itself (its input, raw payload, ...) rather
 * than a hook's answer: only those make a replayed input differ from what the agent sent.
 */
export function inputRedactions(paths: readonly string[]): string[] {
  return paths.filter((p) => !/^(?:message|modifiedInput|additionalContext|outcomes)(?:\.|$)/.test(p));
}
