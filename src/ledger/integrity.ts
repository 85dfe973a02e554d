import type Database from 'better-sqlite3';
import { isAscii } from 'node:buffer';
import * as crypto from 'node:crypto';
import type { InvocationRow, OutcomeRow, PruneCheckpointRow } from './rows.js';

/**
 * The tamper-evidence chain's canonical form, shared by the write path (which appends links
 * inside the committing transaction) and `verify` (which recomputes them).
 *
 * A link's hash is sha-256 over the previous link's hash, its own position (seq, kind, ref,
 * time) and an unambiguous encoding of every stored row of the record: the invocation row
 * (with its hook set's fingerprint, so re-pointing `hook_set_id` is caught) and every outcome
 * row, or one background outcome row, or one prune checkpoint row. The commit path encodes the
 * values it binds (reading the rows back cost more than everything else the chain does);
 * verify encodes the rows SQLite returns. The two agree because every value bound is a string,
 * an integer-valued or finite number, or null (test/integrity/chain.test.ts covers lone
 * surrogates, NUL characters and floats).
 *
 * One sha-256 per link keeps the commit cheap; to name the row that changed, the link also
 * stores a 32-bit check per row (`rows`), which verify consults only when the hash differs.
 *
 * The column lists are fixed here (`CHAIN_ENCODING_V1`) rather than `SELECT *`: a later
 * migration that adds a column must not change the digest of records written before it.
 */

/** prev_hash of the first link. */
export const GENESIS_HASH = '0'.repeat(64);

export const LINK_KINDS = ['invocation', 'background', 'checkpoint'] as const;
export type LinkKind = (typeof LINK_KINDS)[number];

/**
 * The chain's encoding, version 1: which stored columns each kind of link covers, in the order
 * they are encoded. Frozen: a link's hash depends on this list, so a migration that adds a
 * column does not change it (records written before must keep their digests); covering a new
 * column takes a new version. Names are checked against the drizzle schema; the positions the
 * write path and verify use are looked up from here, never written as numbers.
 */
export const CHAIN_ENCODING_V1 = {
  version: 1,
  /** Invocation columns; the hook set's fingerprint follows them (so re-pointing `hook_set_id` is caught). */
  invocation: [
    'id',
    'hook_set_id',
    'point',
    'event_name',
    'session_id',
    'turn',
    'tool_name',
    'tool_use_id',
    'agent',
    'cwd',
    'input_json',
    'invocation_json',
    'raw_json',
    'modified_input_json',
    'status',
    'decision',
    'decisive_hook_id',
    'reason_code',
    'message',
    'context_json',
    'redactions_json',
    'started_at',
    'finished_at',
    'duration_us',
    'pid',
    'host',
  ] as const satisfies readonly (keyof InvocationRow)[],
  outcome: [
    'id',
    'invocation_id',
    'hook_id',
    'point',
    'priority',
    'registration_index',
    'execution_order',
    'mode',
    'capability',
    'runtime',
    'status',
    'decision',
    'decisive',
    'reason_code',
    'message',
    'payload_json',
    'modified_input_json',
    'additional_context',
    'failure_reason',
    'failure_detail',
    'skip_reason',
    'skipped_by',
    'redactions_json',
    'timeout_ms',
    'started_at',
    'duration_us',
  ] as const satisfies readonly (keyof OutcomeRow)[],
  /**
   * The columns of a background outcome that was `pending` when its invocation committed: its
   * identity only. The rest (start, result) is written later and covered by its own
   * `background` link.
   */
  pendingOutcome: [
    'id',
    'invocation_id',
    'hook_id',
    'point',
    'priority',
    'registration_index',
    'mode',
    'capability',
    'runtime',
    'timeout_ms',
  ] as const satisfies readonly (keyof OutcomeRow)[],
  /** Result columns a pending (or recovered-as-interrupted) background outcome without its own link must leave empty. */
  outcomeResult: [
    'decision',
    'reason_code',
    'message',
    'payload_json',
    'modified_input_json',
    'additional_context',
    'failure_reason',
    'skip_reason',
    'skipped_by',
    'redactions_json',
    'duration_us',
  ] as const satisfies readonly (keyof OutcomeRow)[],
  checkpoint: ['id', 'at', 'before', 'invocations', 'outcomes', 'removed_json'] as const satisfies readonly (keyof PruneCheckpointRow)[],
} as const;

type OutcomeColumn = (typeof CHAIN_ENCODING_V1.outcome)[number];
/** The position of an outcome column in the encoded row (and in the rows the selects below return). */
export const outcomeColumnIndex = (name: OutcomeColumn): number => CHAIN_ENCODING_V1.outcome.indexOf(name);

/** Invocation columns covered by the chain, plus the hook set's fingerprint (last). */
export const INVOCATION_SELECT = `SELECT ${CHAIN_ENCODING_V1.invocation.map((c) => `i.${c}`).join(', ')}, h.fingerprint
  FROM invocations i LEFT JOIN hook_sets h ON h.id = i.hook_set_id WHERE i.id = ?`;

const OUTCOME_COLUMNS = CHAIN_ENCODING_V1.outcome.join(', ');
export const OUTCOMES_OF_INVOCATION_SELECT = `SELECT ${OUTCOME_COLUMNS} FROM outcomes WHERE invocation_id = ? ORDER BY id`;
export const OUTCOME_SELECT = `SELECT ${OUTCOME_COLUMNS} FROM outcomes WHERE id = ?`;
export const OUTCOME_ID = outcomeColumnIndex('id');
export const OUTCOME_STATUS = outcomeColumnIndex('status');
const PENDING_PROJECTION = CHAIN_ENCODING_V1.pendingOutcome.map(outcomeColumnIndex);
/** Result columns a pending (or recovered-as-interrupted) background outcome without its own link must leave empty, with their positions. */
export const RESULT_COLUMNS: readonly [number, string][] = CHAIN_ENCODING_V1.outcomeResult.map((name) => [outcomeColumnIndex(name), name]);

export const CHECKPOINT_SELECT = `SELECT ${CHAIN_ENCODING_V1.checkpoint.join(', ')} FROM prune_checkpoints WHERE id = ?`;
/** Position of `removed_json` in a checkpoint row. */
export const CHECKPOINT_REMOVED = CHAIN_ENCODING_V1.checkpoint.indexOf('removed_json');

export type RawRow = unknown[];

/** One row's contribution to a link. */
export interface RowEntry {
  /** `i12`, `o40`, `o41~` (a pending background outcome, projected), `p3`. */
  label: string;
  /** The row's table tag and values (as SQLite stores them), encoded into the link hash by `linkHash`. */
  tag: string;
  values: readonly unknown[];
  /** 8 hex digits: a cheap check of the row, to name it when the link hash differs (not security). */
  check: string;
}

/**
 * The bytes a link hashes, written into one buffer reused by every link (grown for a large
 * row, given back after). Building the text as a JavaScript string (a cons string per value,
 * then one flattened copy, then its UTF-8 form) allocated about 10 KB per invocation on the
 * decision path, a fifth of all it allocates; scavenges in the 99th percentile come from that.
 */
const LINK_BUFFER_BYTES = 64 * 1024;
let linkBuffer = Buffer.allocUnsafe(LINK_BUFFER_BYTES);
let linkLength = 0;

/** Makes room for `bytes` more bytes in the link buffer. */
function reserve(bytes: number): void {
  if (linkLength + bytes <= linkBuffer.length) return;
  const grown = Buffer.allocUnsafe(Math.max(linkBuffer.length * 2, linkLength + bytes));
  linkBuffer.copy(grown, 0, 0, linkLength);
  linkBuffer = grown;
}

/** Appends text as UTF-8 (what hashing the text as a string would hash). */
function put(text: string): void {
  const n = text.length;
  reserve(n * 3);
  // Short ASCII (tags, labels, names, most column values) is copied here: a native write per
  // piece costs more than the copy.
  if (n <= 24) {
    const buffer = linkBuffer;
    let at = linkLength;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) {
        linkLength += buffer.write(text, linkLength, 'utf8');
        return;
      }
      buffer[at++] = c;
    }
    linkLength = at;
    return;
  }
  linkLength += linkBuffer.write(text, linkLength, 'utf8');
}

/** Appends a non-negative safe integer's decimal digits, as `String(n)` writes them, without a string. */
function putDigits(n: number): void {
  reserve(16);
  if (n < 1e9) putSmall(n, 0);
  else {
    // Floating-point `%` on a timestamp-sized number is a libm call: split into int32 halves.
    const high = Math.floor(n / 1e9);
    putSmall(high, 0);
    putSmall(n - high * 1e9, 9);
  }
}

/** Digits of 0 <= n < 1e9 (int32 arithmetic), left-padded with zeros to `width`. */
function putSmall(n: number, width: number): void {
  let digits = 1;
  for (let rest = n; rest >= 10; rest = (rest / 10) | 0) digits += 1;
  if (digits < width) digits = width;
  const buffer = linkBuffer;
  let at = linkLength + digits;
  linkLength = at;
  for (let i = 0; i < digits; i++) {
    const next = (n / 10) | 0;
    buffer[--at] = 48 + n - next * 10;
    n = next;
  }
}

/** Appends a value as a template literal writes it (`${value}`): digits without a string for a safe integer. */
function putValue(value: unknown): void {
  if (typeof value === 'number' && Number.isSafeInteger(value)) {
    if (value < 0) {
      put('-');
      putDigits(-value);
    } else putDigits(value === 0 ? 0 : value); // String(-0) is "0".
  } else put(String(value));
}

/**
 * Unambiguous text for a row's values: a type tag per value and a length prefix per string,
 * so no two different rows encode alike (`"a","bc"` vs `"ab","c"`, `null` vs `"null"`):
 * `tag`, then per value `|n` (null), `|s<UTF-16 length>:<text>`, `|i<integer>` (a number or
 * bigint), `|r<number>` (not an integer), `|b<hex>` (a Buffer), `|?<String(value)>`.
 */
function encode(tag: string, values: readonly unknown[]): void {
  put(tag);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) put('|n');
    else if (typeof v === 'string') {
      put('|s');
      putValue(v.length);
      put(':');
      put(v);
    } else if (typeof v === 'number') {
      put(Number.isInteger(v) ? '|i' : '|r');
      putValue(v);
    } else if (typeof v === 'bigint') put('|i' + v);
    else if (Buffer.isBuffer(v)) put('|b' + v.toString('hex'));
    else put('|?' + String(v));
  }
}

/**
 * FNV-1a over each value's type, length and (for long strings) a sample of its characters:
 * O(columns), not O(bytes). Only for naming the changed row; the link hash is the check.
 */
function quickCheck(values: readonly unknown[]): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) h = Math.imul(h ^ 0x6e, 0x01000193);
    else if (typeof v === 'string') {
      const n = v.length;
      h = Math.imul(h ^ n, 0x01000193);
      if (n <= 64) for (let k = 0; k < n; k++) h = Math.imul(h ^ v.charCodeAt(k), 0x01000193);
      else {
        const step = Math.floor(n / 48);
        for (let k = 0; k < n; k += step) h = Math.imul(h ^ v.charCodeAt(k), 0x01000193);
        h = Math.imul(h ^ v.charCodeAt(n - 1), 0x01000193);
      }
    } else if (typeof v === 'number') {
      h = Math.imul(h ^ (v | 0), 0x01000193);
      h = Math.imul(h ^ ((v / 4294967296) | 0), 0x01000193);
      if (!Number.isInteger(v)) h = Math.imul(h ^ Math.round((v % 1) * 1e9), 0x01000193);
    } else h = Math.imul(h ^ String(v).length, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const isWellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/**
 * A string as SQLite will give it back: better-sqlite3 stores a lone surrogate as its 3-byte
 * WTF-8 form, which reads back as three U+FFFD. (Strings from JSON.parse of an agent's payload
 * can carry lone surrogates; JSON columns cannot, JSON.stringify escapes them.)
 */
function asStored(values: readonly unknown[]): readonly unknown[] {
  let copy: unknown[] | null = null;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (typeof v === 'string' && !isWellFormed(v)) {
      copy ??= [...values];
      copy[i] = v.replace(LONE_SURROGATE, '\ufffd\ufffd\ufffd');
    }
  }
  return copy ?? values;
}

function entry(label: string, tag: string, raw: readonly unknown[]): RowEntry {
  const values = asStored(raw);
  return { label, tag, values, check: quickCheck(values) };
}

export function invocationEntry(row: RawRow): RowEntry {
  return entry(`i${row[0] as number}`, 'invocations', row);
}

export function outcomeEntry(row: RawRow, pendingAtCommit: boolean): RowEntry {
  if (pendingAtCommit)
    return entry(
      `o${row[OUTCOME_ID] as number}~`,
      'outcomes~',
      PENDING_PROJECTION.map((i) => row[i]),
    );
  return entry(`o${row[OUTCOME_ID] as number}`, 'outcomes', row);
}

export function checkpointEntry(row: RawRow): RowEntry {
  return entry(`p${row[0] as number}`, 'prune_checkpoints', row);
}

/** The hash of one link. */
export function linkHash(prevHash: string, seq: number, kind: string, refId: number, at: number, entries: readonly RowEntry[]): string {
  linkLength = 0;
  put(`hookledger-chain-v${CHAIN_ENCODING_V1.version}\n`);
  put(prevHash);
  put('\n');
  putValue(seq);
  put('\n');
  put(kind);
  put('\n');
  putValue(refId);
  put('\n');
  putValue(at);
  for (const e of entries) {
    put('\n');
    put(e.label);
    put('\n');
    encode(e.tag, e.values);
  }
  const hash = sha256Hex(linkBuffer.subarray(0, linkLength));
  if (linkBuffer.length > LINK_BUFFER_BYTES) linkBuffer = Buffer.allocUnsafe(LINK_BUFFER_BYTES);
  return hash;
}

/** One-shot `crypto.hash` where Node has it (20.12+): no Hash object per link. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string | Buffer, encoding: 'hex') => string }).hash;
const sha256Hex = oneShot
  ? (text: string | Buffer): string => oneShot('sha256', text, 'hex')
  : (text: string | Buffer): string => crypto.createHash('sha256').update(text).digest('hex');

/**
 * The hash of a link from the text SQLite built for it (link-text-sql.ts), or null when that
 * text cannot stand for the JavaScript encoding (not ASCII, where SQLite's lengths are not
 * UTF-16 lengths, or holding NUL).
 */
export function linkHashOfText(text: Buffer): string | null {
  return isAscii(text) && text.indexOf(0) === -1 ? sha256Hex(text) : null;
}

/** The diagnostic `rows` column: each row's label and check. */
export function rowsText(entries: readonly RowEntry[]): string {
  return entries.map((e) => `${e.label}:${e.check}`).join(' ');
}

/** Parses the `rows` column; tolerant, since it is not trusted (verify only uses it to name a row). */
export function parseRowsText(text: string): Map<string, { pending: boolean; check: string }> {
  const map = new Map<string, { pending: boolean; check: string }>();
  for (const part of text.split(' ')) {
    const m = /^([iop]\d+)(~?):([0-9a-f]{8})$/.exec(part);
    if (m) map.set(m[1]!, { pending: m[2] === '~', check: m[3]! });
  }
  return map;
}

/**
 * Appends links. Must be called inside an IMMEDIATE transaction: the head is read and the
 * new link written under the write lock, so concurrent writer processes form one chain.
 */
export class ChainAppender {
  private readonly selectHead: Database.Statement<[], [number, string]>;
  private readonly insertLink: Database.Statement;

  constructor(sqlite: Database.Database) {
    this.selectHead = sqlite.prepare('SELECT seq, hash FROM chain ORDER BY seq DESC LIMIT 1').raw() as Database.Statement<
      [],
      [number, string]
    >;
    this.insertLink = sqlite.prepare('INSERT INTO chain (seq, kind, ref_id, prev_hash, hash, at, rows) VALUES (?, ?, ?, ?, ?, ?, ?)');
  }

  /** The current head; `{ seq: 0, hash: GENESIS_HASH }` for an empty chain. */
  head(): { seq: number; hash: string } {
    const row = this.selectHead.get();
    return row ? { seq: row[0], hash: row[1] } : { seq: 0, hash: GENESIS_HASH };
  }

  /**
   * Appends a link after the head, or after `after` when given: prune, having just removed the
   * newest links, appends its checkpoint after the last link it removed, so that a seq is never
   * used twice (a reader that has seen link N, e.g. `ship`, must be able to trust that every later
   * link has a higher seq).
   */
  append(
    kind: LinkKind,
    refId: number,
    entries: readonly RowEntry[],
    at = Date.now(),
    after?: { seq: number; hash: string },
  ): { seq: number; hash: string } {
    const current = this.head();
    const head = after && after.seq > current.seq ? after : current;
    const seq = head.seq + 1;
    const hash = linkHash(head.hash, seq, kind, refId, at, entries);
    this.insertLink.run(seq, kind, refId, head.hash, hash, at, rowsText(entries));
    return { seq, hash };
  }
}
