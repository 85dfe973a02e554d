/**
 * Strings as a PostgreSQL ledger stores them, and back. `text` holds valid UTF-8 without NUL:
 *
 * - a lone surrogate (possible in a string from JSON.parse of an agent's payload) becomes the
 *   three U+FFFD that SQLite stores for it, so the same record is stored, and chained, alike on
 *   both engines (SQLite returns those three characters too, so nothing is lost that a SQLite
 *   ledger kept);
 * - NUL, which SQLite keeps, is escaped reversibly, so that a shipped source's records can be
 *   rebuilt exactly and verified as the source verifies them (docs/ship.md, "NUL"): NUL is stored
 *   as U+2400 (SYMBOL FOR NULL, so a console shows it as ␀), a literal U+2400 as U+241B U+2400 and
 *   a literal U+241B (SYMBOL FOR ESCAPE) as U+241B U+241B. The stored form never holds a control
 *   character the original did not, so reports show it as safely as any text.
 *
 * JSON columns need neither change for NUL or surrogates (JSON.stringify escapes both), but a
 * literal U+2400 or U+241B inside JSON text is escaped like any text: every string goes through
 * the one function below, whichever way it is written (parameters, COPY, unnest arrays).
 */

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** NUL's stored form (U+2400), shown as ␀. */
export const STORED_NUL = '\u2400';
/** The escape that keeps a literal U+2400 or U+241B apart from an escaped NUL. */
export const STORED_ESCAPE = '\u241b';

const ESCAPED = /[\0\u2400\u241b]/g;
const ESCAPES: Record<string, string> = {
  '\0': STORED_NUL,
  [STORED_NUL]: STORED_ESCAPE + STORED_NUL,
  [STORED_ESCAPE]: STORED_ESCAPE + STORED_ESCAPE,
};
const ESCAPE_SEQUENCE = /\u241b([\u2400\u241b])|\u2400/g;

/** One value as stored: strings normalized and escaped (see the file comment), everything else unchanged. */
export function storedValue<T>(value: T): T {
  if (typeof value !== 'string') return value;
  let text: string = value;
  if (!isWellFormed(text)) text = text.replace(LONE_SURROGATE, '\ufffd\ufffd\ufffd');
  // Three scans for a character are cheaper than one regular expression test (most text has none).
  if (text.includes('\0') || text.includes(STORED_NUL) || text.includes(STORED_ESCAPE)) text = text.replace(ESCAPED, (c) => ESCAPES[c]!);
  return text as T;
}

/** Every value of a parameter list as stored. */
export function storedValues(values: unknown[]): unknown[] {
  for (let i = 0; i < values.length; i++) values[i] = storedValue(values[i]);
  return values;
}

/**
 * The text a stored value was written from (storedValue's inverse, for strings it produced):
 * U+2400 is NUL again, U+241B U+2400 a literal U+2400, U+241B U+241B a literal U+241B. A
 * U+241B followed by anything else is kept as it is. Everything but strings is unchanged.
 *
 * Text stored before this escaping (shipped by hookledger before the NUL round trip) held a
 * literal U+2400 as U+2400, which now reads back as NUL: verify checks such a record both ways
 * (verify-sources.ts).
 */
export function originalValue<T>(value: T): T {
  if (typeof value !== 'string' || !(value.includes(STORED_NUL) || value.includes(STORED_ESCAPE))) return value;
  return value.replace(ESCAPE_SEQUENCE, (_, escaped: string | undefined) => escaped ?? '\0') as T;
}
