/**
 * Deep, frozen copies of the values hooks are handed. Every hook of an invocation sees the
 * same input; if one could change it in place, an observer could rewrite a tool call past the
 * guardrails after it (observe-only broken), a guardrail could change it without a recorded
 * `modify`, and the caller's own object would drift from what the ledger stored. A frozen copy
 * makes such a write throw (ES modules are strict), which the runner records as the hook's
 * failure, pointing its author to `modify`.
 */

/** True for `{}`-style objects (not arrays, class instances, Dates, Maps, buffers). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Copies plain objects and arrays, all the way down, and freezes the copies. Anything else (a
 * primitive, or an object of some class a library caller passed) is kept as it is: payloads from
 * an agent are JSON and never contain one. Shared and cyclic references stay shared and cyclic.
 * Throws what a throwing getter throws.
 */
export function frozenCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  return copy(value, new Map()) as T;
}

function copy(value: unknown, seen: Map<object, unknown>): unknown {
  if (value === null || typeof value !== 'object') return value;
  const done = seen.get(value);
  if (done !== undefined) return done;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    seen.set(value, out);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i], seen);
    return Object.freeze(out);
  }
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = Object.getPrototypeOf(value) === null ? Object.create(null) : {};
  seen.set(value, out);
  for (const key of Object.keys(value)) out[key] = copy(value[key], seen);
  return Object.freeze(out);
}
