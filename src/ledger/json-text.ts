/** Largest JSON text stored for a value a hook returned (payload, message); larger values are cut with a marker. */
export const MAX_HOOK_VALUE_BYTES = 256 * 1024;

/**
 * JSON text for storage; null for null/undefined. Never throws: a cyclic or BigInt value a
 * hostile hook returned is stored as a description of why it could not be serialised.
 */
export function toJsonText(value: unknown, maxBytes?: number): string | null {
  if (value === undefined || value === null) return null;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    return JSON.stringify({ unserializable: (error as Error).message });
  }
  if (text === undefined) return null;
  if (maxBytes !== undefined && text.length > maxBytes) {
    return JSON.stringify({ truncated: true, length: text.length, head: text.slice(0, 1024) });
  }
  return text;
}

/** Parses stored JSON text; null stays null. */
export function fromJsonText(text: string | null): unknown {
  return text === null ? null : (JSON.parse(text) as unknown);
}

/** Caps a free-text field a hook supplied. */
export function capText(text: string | null | undefined, max = 8192): string | null {
  if (text === undefined || text === null) return null;
  return text.length > max ? `${text.slice(0, max)}… [${text.length - max} more characters]` : text;
}
