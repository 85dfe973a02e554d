/**
 * Strings as a PostgreSQL ledger stores them. `text` holds valid UTF-8 without NUL: a lone
 * surrogate (possible in a string from JSON.parse of an agent's payload) becomes the three
 * U+FFFD that SQLite stores for it, so the same record is stored, and chained, alike on both
 * engines; a NUL character becomes U+2400 (SYMBOL FOR NULL), which SQLite would have kept as is.
 * JSON columns never need either: JSON.stringify escapes both.
 */

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** One value as stored: strings normalized (see the file comment), everything else unchanged. */
export function storedValue<T>(value: T): T {
  if (typeof value !== 'string') return value;
  let text: string = value;
  if (!isWellFormed(text)) text = text.replace(LONE_SURROGATE, '\ufffd\ufffd\ufffd');
  if (text.includes('\0')) text = text.replaceAll('\0', '\u2400');
  return text as T;
}

/** Every value of a parameter list as stored. */
export function storedValues(values: unknown[]): unknown[] {
  for (let i = 0; i < values.length; i++) values[i] = storedValue(values[i]);
  return values;
}
