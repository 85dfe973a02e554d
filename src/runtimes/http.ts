import { parseJsonOutput, readClaudeJsonOutput, stderrExcerpt, toClaudePayload } from './claude-wire.js';
import { readMeerkatJsonOutput, toMeerkatPayload } from './meerkat-wire.js';
import { HookExecutionFailure, type HookRuntime } from './types.js';

/** A hook answer never needs more; a larger body is refused rather than buffered. */
export const HTTP_BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Runs a hook as an HTTP endpoint, as Claude Code's `http` hooks do (or, with `protocol:
 * "meerkat"`, as meerkat's do: the meerkat invocation POSTed, its answer in the 2xx body): the Claude payload is
 * POSTed as JSON; a 2xx body is read like command stdout (empty = no opinion, JSON object =
 * the answer); anything else is a failure. HTTP status alone cannot deny.
 */
export const httpRuntime: HookRuntime = {
  async execute(hook, invocation, ctx) {
    if (hook.runtime.kind !== 'http') throw new Error(`http runtime given a ${hook.runtime.kind} hook`);
    const { url } = hook.runtime;
    const meerkat = hook.runtime.protocol === 'meerkat';
    const headers = new Headers({ 'content-type': 'application/json' });
    // Set one by one so a configured Content-Type replaces ours whatever its case.
    for (const [name, value] of Object.entries(hook.runtime.headers)) headers.set(name, value);
    let body: string;
    try {
      body = JSON.stringify(meerkat ? toMeerkatPayload(invocation) : toClaudePayload(invocation, ctx));
    } catch (error) {
      throw new HookExecutionFailure('execution_failed', `could not serialise the invocation for ${url}: ${(error as Error).message}`);
    }

    let response: Response;
    try {
      response = await fetch(url, { method: 'POST', headers, body, signal: ctx.signal });
    } catch (error) {
      // An abort is the runner's timeout: it records that itself.
      if (ctx.signal.aborted) throw error;
      throw new HookExecutionFailure('execution_failed', `could not reach ${url}: ${describeFetchError(error)}`);
    }

    let text: string;
    let overflowed: boolean;
    try {
      ({ text, overflowed } = await readCappedBody(response, HTTP_BODY_LIMIT_BYTES));
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      throw new HookExecutionFailure('execution_failed', `could not read the response from ${url}: ${describeFetchError(error)}`);
    }

    if (!response.ok) {
      const excerpt = stderrExcerpt(text);
      const status = `HTTP ${response.status} ${response.statusText}`.trimEnd();
      throw new HookExecutionFailure('execution_failed', excerpt === '' ? status : `${status}: ${excerpt}`);
    }
    if (overflowed) throw new HookExecutionFailure('invalid_result', 'response body exceeded 1 MiB');
    const trimmed = text.trim();
    if (meerkat) {
      // meerkat reads every 2xx body as its answer: an empty one is a failure there too.
      if (trimmed === '')
        throw new HookExecutionFailure('invalid_result', 'response body is empty (a meerkat hook answers {} for no decision)');
      return readMeerkatJsonOutput(parseJsonOutput(trimmed, 'response body'), hook.id, 'response body JSON');
    }
    if (trimmed === '') return undefined;
    return readClaudeJsonOutput(parseJsonOutput(trimmed, 'response body'), invocation.point, hook.id, 'response body JSON');
  },
};

/** Reads at most `limit` bytes of the body, then cancels the rest so a huge answer costs nothing. */
async function readCappedBody(response: Response, limit: number): Promise<{ text: string; overflowed: boolean }> {
  if (response.body === null) return { text: '', overflowed: false };
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.byteLength > limit) {
      chunks.push(value.subarray(0, limit - size));
      await reader.cancel().catch(() => {});
      return { text: Buffer.concat(chunks).toString('utf8'), overflowed: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
  return { text: Buffer.concat(chunks).toString('utf8'), overflowed: false };
}

/** undici reports "fetch failed" and hides the useful part (ECONNREFUSED, ENOTFOUND ...) in `cause`. */
function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string' && cause.message !== '') return cause.message;
  return error.message;
}
