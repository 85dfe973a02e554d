import { describeThrown } from '../domain/errors.js';

/**
 * The most a hook's answer may weigh, as JSON. A decision never needs a megabyte; a hook that
 * returns one (a runaway payload, a whole file as `modify` input) is recorded as
 * `invalid_result` rather than copied into the ledger and handed to the agent. The same limit
 * as command stdout and http bodies.
 */
export const RESULT_LIMIT_BYTES = 1024 * 1024;

/**
 * True when `value` serialised as JSON would exceed `limit` bytes (counting UTF-16 units for
 * strings, which is close enough for a cap). The walk stops as soon as the limit is passed,
 * so a 500 MB answer costs about as much as a 1 MB one. A subtree referenced many times is
 * counted every time, as JSON would write it; only a real cycle (an object inside itself) is
 * not followed, and left to the ledger, which stores it as a description. Never throws: a
 * value that cannot be read (a throwing getter, a revoked proxy) is left to validation.
 */
export function exceedsJsonLimit(value: unknown, limit = RESULT_LIMIT_BYTES): boolean {
  if (value === undefined || value === null || typeof value !== 'object') {
    return typeof value === 'string' && value.length + 2 > limit;
  }
  try {
    const flat = flatObjectSize(value);
    if (flat >= 0) return flat > limit;
    let size = 0;
    // Objects on the path from the root to the current one: meeting one again is a cycle.
    const ancestors = new Set<object>();
    const stack: { value: unknown; leave?: object }[] = [{ value }];
    while (stack.length > 0) {
      const frame = stack.pop()!;
      if (frame.leave !== undefined) {
        ancestors.delete(frame.leave);
        continue;
      }
      const v = frame.value;
      if (typeof v === 'string') size += v.length + 2;
      else if (v === null || typeof v !== 'object') size += 8;
      else if (!ancestors.has(v)) {
        if (ArrayBuffer.isView(v)) {
          // JSON writes a typed array as an object of index keys: several bytes per element.
          size += v.byteLength * 4;
        } else {
          ancestors.add(v);
          stack.push({ value: undefined, leave: v });
          if (Array.isArray(v)) {
            size += 2 + v.length;
            if (size > limit) return true;
            for (const item of v as unknown[]) stack.push({ value: item });
          } else {
            size += 2;
            for (const key in v) {
              if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
              size += key.length + 4;
              if (size > limit) return true;
              stack.push({ value: (v as Record<string, unknown>)[key] });
            }
          }
        }
      }
      if (size > limit) return true;
    }
    return false;
  } catch {
    return false;
  }
}

/**
 * The size `exceedsJsonLimit` counts for a plain object whose values are all primitives (what
 * nearly every hook answers: `{ decision: 'allow' }`), counted without the walk's stack and
 * cycle set, which allocated on every hook of every decision; -1 for any other value.
 */
function flatObjectSize(value: object): number {
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return -1;
  let size = 2;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    const v = (value as Record<string, unknown>)[key];
    if (v !== null && typeof v === 'object') return -1;
    size += key.length + 4 + (typeof v === 'string' ? v.length + 2 : 8);
  }
  return size;
}

/** The failure detail for an answer over the limit. */
export const RESULT_LIMIT_DETAIL = `result exceeds ${RESULT_LIMIT_BYTES} bytes as JSON (1 MiB); return a small answer and keep bulk data elsewhere`;

/** describeThrown on a value built to resist it (a throwing message getter, toString or toJSON; a revoked proxy). */
export function describeHostile(thrown: unknown): string {
  try {
    return describeThrown(thrown);
  } catch {
    return 'a value that cannot be described (its message, toJSON or toString threw)';
  }
}
