import { once } from 'node:events';
import { createRequire } from 'node:module';
import type * as V8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { InputError } from '../../domain/errors.js';
import type { Outcome } from '../../domain/outcomes.js';
import { fromJsonText } from '../json-text.js';
import type { Ledger } from '../open.js';
import {
  OUTCOME_ORDER,
  outcomeFromRow,
  type HookSetRow as StoredHookSetRow,
  type InvocationRow,
  type InvocationSummary,
  type OutcomeRow,
} from '../rows.js';
import { prepared } from '../statements.js';
import { orderedFilterSql, type InvocationFilter } from './filters.js';

/** One line of `hookledger export`: an invocation with everything recorded about it. */
export interface ExportRecord extends Omit<InvocationSummary, 'hookSetId'> {
  finishedAt: number | null;
  hookSet: { id: number; name: string; version: string; fingerprint: string };
  /** The modifiable input as the agent sent it (tool input, or the prompt). */
  input: unknown;
  /** The input as hooks left it, or null when unchanged. */
  modifiedInput: unknown;
  additionalContext: string[];
  redactions: string[];
  /** The canonical invocation (docs/design.md §8) without `raw`. */
  invocation: unknown;
  /** The agent's own payload, verbatim. */
  raw: unknown;
  pid: number;
  host: string;
  /** Every matched hook, in execution order. */
  outcomes: Outcome[];
}

export const EXPORT_FORMATS = ['jsonl', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Invocations read per query: bounds memory (about this many invocations and their outcomes) whatever the ledger size. */
const BATCH = 500;

/** The hook-set columns an export record carries. */
export type HookSetRow = Pick<StoredHookSetRow, 'id' | 'name' | 'version' | 'fingerprint'>;

/** One invocation's stored rows, as read for the export. */
interface ExportRows {
  row: InvocationRow;
  hookSet: HookSetRow;
  outcomes: OutcomeRow[];
}

/**
 * Every invocation the filter selects, oldest first, with its outcome rows. Read in keyset
 * batches (`id > last ORDER BY id LIMIT n`), so no read transaction stays open between
 * batches, memory stays flat, and invocations recorded during the export are included once
 * (if they match) and never twice.
 */
function* exportRows(ledger: Ledger, filter: InvocationFilter): Generator<ExportRows> {
  const { where, params } = orderedFilterSql(ledger, filter, ['i.id > ?']);
  const batch = prepared<unknown[], InvocationRow>(ledger, `SELECT i.* FROM invocations i ${where} ORDER BY i.id LIMIT ${BATCH}`);
  const outcomesIn = prepared<[string], OutcomeRow>(
    ledger,
    `SELECT * FROM outcomes WHERE invocation_id IN (SELECT value FROM json_each(?)) ORDER BY invocation_id, ${OUTCOME_ORDER}`,
  );
  const hookSets = new Map<number, HookSetRow>();
  const hookSet = prepared<[number], HookSetRow>(ledger, 'SELECT id, name, version, fingerprint FROM hook_sets WHERE id = ?');
  let last = 0;
  for (;;) {
    const rows = batch.all(...params, last);
    if (rows.length === 0) return;
    last = rows[rows.length - 1]!.id;
    const grouped = new Map<number, OutcomeRow[]>();
    for (const o of outcomesIn.all(JSON.stringify(rows.map((r) => r.id)))) {
      let list = grouped.get(o.invocation_id);
      if (!list) grouped.set(o.invocation_id, (list = []));
      list.push(o);
    }
    for (const r of rows) {
      let hs = hookSets.get(r.hook_set_id);
      if (!hs) hookSets.set(r.hook_set_id, (hs = hookSet.get(r.hook_set_id)!));
      yield { row: r, hookSet: hs, outcomes: grouped.get(r.id) ?? [] };
    }
  }
}

/**
 * Every invocation the filter selects, oldest first, each with its outcomes (see `exportRows`
 * for how it is read).
 */
export function* exportRecords(ledger: Ledger, filter: InvocationFilter): Generator<ExportRecord> {
  for (const { row, hookSet, outcomes } of exportRows(ledger, filter)) yield exportRecordFrom(row, hookSet, outcomes);
}

/** An export record from an invocation's stored rows (both engines; `decisive` as 0/1). */
export function exportRecordFrom(r: InvocationRow, hs: HookSetRow, outcomes: OutcomeRow[]): ExportRecord {
  return {
    id: r.id,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationUs: r.duration_us,
    point: r.point,
    eventName: r.event_name,
    sessionId: r.session_id,
    turn: r.turn,
    toolName: r.tool_name,
    toolUseId: r.tool_use_id,
    agent: r.agent,
    cwd: r.cwd,
    status: r.status,
    decision: r.decision,
    decisiveHookId: r.decisive_hook_id,
    reasonCode: r.reason_code,
    message: r.message,
    hookSet: hs,
    input: fromJsonText(r.input_json),
    modifiedInput: fromJsonText(r.modified_input_json),
    additionalContext: (fromJsonText(r.context_json) as string[] | null) ?? [],
    redactions: (fromJsonText(r.redactions_json) as string[] | null) ?? [],
    invocation: fromJsonText(r.invocation_json),
    raw: fromJsonText(r.raw_json),
    pid: r.pid,
    host: r.host,
    outcomes: outcomes.map(outcomeFromRow),
  };
}

/** A nullable number column as `${value}` writes it in JavaScript. */
const num = (column: string) => `coalesce(${column}, 'null')`;
/** A text column as `JSON.stringify` writes it (json_quote escapes exactly as it does; NULL is null). */
const str = (column: string) => `json_quote(${column})`;

/**
 * The JSON Lines text of one outcome, built by SQLite: byte for byte `JSON.stringify` of what
 * `outcomeFromRow` builds, keys in its order, stored JSON spliced in as it is.
 */
const OUTCOME_JSON = `format('{"hookId":%s,"point":%s,"priority":%s,"registrationIndex":%s,"executionOrder":%s,"mode":%s,"capability":%s,"runtime":%s,"status":%s,"decision":%s,"decisive":%s,"reasonCode":%s,"message":%s,"payload":%s,"modifiedInput":%s,"additionalContext":%s,"failureReason":%s,"failureDetail":%s,"skipReason":%s,"skippedBy":%s,"timeoutMs":%s,"startedAt":%s,"durationUs":%s}',
  ${str('o.hook_id')}, ${str('o.point')}, ${num('o.priority')}, ${num('o.registration_index')}, ${num('o.execution_order')},
  ${str('o.mode')}, ${str('o.capability')}, ${str('o.runtime')}, ${str('o.status')}, ${str('o.decision')},
  CASE WHEN o.decisive = 1 THEN 'true' ELSE 'false' END, ${str('o.reason_code')}, ${str('o.message')}, ${num('o.payload_json')},
  ${num('o.modified_input_json')}, ${str('o.additional_context')}, ${str('o.failure_reason')}, ${str('o.failure_detail')},
  ${str('o.skip_reason')}, ${str('o.skipped_by')}, ${num('o.timeout_ms')}, ${num('o.started_at')}, ${num('o.duration_us')})`;

/**
 * The JSON Lines text of one invocation, byte for byte `JSON.stringify` of its `ExportRecord`
 * (keys in the order `exportRecords` builds them), assembled by SQLite in one pass: the stored
 * JSON columns hold `JSON.stringify` output (ledger/json-text.ts), which is what re-serialising
 * their parse gives back, so they are spliced in as they are, and the rest is quoted by
 * json_quote. Building the line in JavaScript from row objects cost more than reading the rows.
 */
const INVOCATION_JSON = `format('{"id":%s,"startedAt":%s,"finishedAt":%s,"durationUs":%s,"point":%s,"eventName":%s,"sessionId":%s,"turn":%s,"toolName":%s,"toolUseId":%s,"agent":%s,"cwd":%s,"status":%s,"decision":%s,"decisiveHookId":%s,"reasonCode":%s,"message":%s,"hookSet":{"id":%s,"name":%s,"version":%s,"fingerprint":%s},"input":%s,"modifiedInput":%s,"additionalContext":%s,"redactions":%s,"invocation":%s,"raw":%s,"pid":%s,"host":%s,"outcomes":[%s]}',
  i.id, i.started_at, ${num('i.finished_at')}, ${num('i.duration_us')}, ${str('i.point')}, ${str('i.event_name')},
  ${str('i.session_id')}, ${num('i.turn')}, ${str('i.tool_name')}, ${str('i.tool_use_id')}, ${str('i.agent')}, ${str('i.cwd')},
  ${str('i.status')}, ${str('i.decision')}, ${str('i.decisive_hook_id')}, ${str('i.reason_code')}, ${str('i.message')},
  h.id, ${str('h.name')}, ${str('h.version')}, ${str('h.fingerprint')}, ${num('i.input_json')}, ${num('i.modified_input_json')},
  coalesce(i.context_json, '[]'), coalesce(i.redactions_json, '[]'), i.invocation_json, ${num('i.raw_json')}, ${num('i.pid')}, ${str('i.host')},
  coalesce((SELECT group_concat(${OUTCOME_JSON}, ',' ORDER BY ${OUTCOME_ORDER.replace(/(^|, )(?=[a-z])/g, '$1o.')}) FROM outcomes o WHERE o.invocation_id = i.id), ''))`;

/**
 * Characters per write to the output stream. Below V8's large-object size (128 KiB), like the
 * batches: strings that size die young and are collected cheaply, whereas large ones wait for
 * a full collection, and the heap grew past 80 MB with them.
 */
const WRITE_CHARS = 32_768;

/** Invocations per JSON Lines query (a line is a few KiB). */
const LINE_BATCH = 16;

/** The lines of one batch of invocations, ready to write. */
interface LineBatch {
  text: string;
  rows: number;
}

/**
 * JSON Lines, `LINE_BATCH` invocations per keyset query (as `exportRows`), the batch's lines
 * built and joined by SQLite (`INVOCATION_JSON`) and read as one string: no row objects, and
 * nothing outside the JavaScript heap, whose collector then sees all the garbage (a Buffer
 * per line piled up tens of MB before a collection).
 */
function* jsonLines(ledger: Ledger, filter: InvocationFilter): Generator<LineBatch> {
  const { where, params } = orderedFilterSql(ledger, filter, ['i.id > ?']);
  const batch = prepared<unknown[], [number | null, number, string | null]>(
    ledger,
    `SELECT max(id), count(*), group_concat(line, '' ORDER BY id) FROM (
       SELECT i.id, ${INVOCATION_JSON} || char(10) AS line FROM invocations i JOIN hook_sets h ON h.id = i.hook_set_id ${where}
       ORDER BY i.id LIMIT ${LINE_BATCH})`,
  ).raw();
  let last = 0;
  for (;;) {
    const [max, rows, text] = batch.get(...params, last)!;
    if (max === null || text === null) return;
    last = max;
    yield { text, rows };
  }
}

/** The invocation-level CSV columns, in order (camelCase, like the JSON). */
export const CSV_COLUMNS = [
  'id',
  'startedAt',
  'startedAtIso',
  'durationUs',
  'point',
  'eventName',
  'sessionId',
  'turn',
  'toolName',
  'toolUseId',
  'agent',
  'status',
  'decision',
  'decisiveHookId',
  'reasonCode',
  'message',
  'modified',
  'hooks',
  'failures',
  'timeouts',
  'hookSetName',
  'hookSetVersion',
  'hookSetFingerprint',
] as const;

/** One CSV line (RFC 4180 quoting, no line terminator). */
export function csvLine(values: readonly (string | number | boolean | null)[]): string {
  let line = '';
  for (let k = 0; k < values.length; k++) line += k === 0 ? csvCell(values[k]!) : `,${csvCell(values[k]!)}`;
  return line;
}

const NEEDS_QUOTES = /[",\r\n]|^\s|\s$/;

/** One CSV cell, quoted where RFC 4180 (or a leading or trailing space) needs it. */
function csvCell(v: string | number | boolean | null): string {
  if (v === null) return '';
  if (typeof v !== 'string') return String(v);
  return NEEDS_QUOTES.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/**
 * A text cell as a spreadsheet will not evaluate it: agent and hook data starting with
 * = + - @ tab or CR would run as a formula in whoever opens the export (OWASP's CSV injection),
 * so such a cell gets a leading `'`. Text columns only: a negative number stays a number.
 */
export function csvText(text: string | null): string | null {
  return text !== null && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/**
 * The values of one CSV line, before quoting. A number may come as its decimal text: SQLite's
 * export reads them so (see `csvLines`).
 */
export interface CsvFields {
  id: number | string;
  startedAt: number | string;
  durationUs: number | string | null;
  point: string;
  eventName: string | null;
  sessionId: string | null;
  turn: number | string | null;
  toolName: string | null;
  toolUseId: string | null;
  agent: string | null;
  status: string;
  decision: string | null;
  decisiveHookId: string | null;
  reasonCode: string | null;
  message: string | null;
  modified: boolean;
  hooks: number | string;
  failures: number | string;
  timeouts: number | string;
  hookSetName: string;
  hookSetVersion: string;
  hookSetFingerprint: string;
}

/** One CSV line (no terminator) from its values, quoted and formula-guarded as every engine writes it. */
export function csvFieldsLine(f: CsvFields): string {
  const t = (text: string | null) => csvCell(csvText(text));
  return (
    `${f.id},${f.startedAt},${new Date(Number(f.startedAt)).toISOString()},${csvCell(f.durationUs)},${t(f.point)},${t(f.eventName)}` +
    `,${t(f.sessionId)},${csvCell(f.turn)},${t(f.toolName)},${t(f.toolUseId)},${t(f.agent)},${t(f.status)},${t(f.decision)}` +
    `,${t(f.decisiveHookId)},${t(f.reasonCode)},${t(f.message)},${f.modified},${f.hooks},${f.failures},${f.timeouts}` +
    `,${t(f.hookSetName)},${t(f.hookSetVersion)},${t(f.hookSetFingerprint)}`
  );
}

/**
 * A row of an engine's CSV query, positionally (raw rows cost less than objects): the columns
 * `csvFieldsLine` writes, in its order. Numbers may come as their decimal text, `modified` as a
 * boolean or SQLite's 0/1.
 */
export type CsvRaw = [
  id: number | string,
  startedAt: number | string,
  durationUs: number | string | null,
  point: string,
  eventName: string | null,
  sessionId: string | null,
  turn: number | string | null,
  toolName: string | null,
  toolUseId: string | null,
  agent: string | null,
  status: string,
  decision: string | null,
  decisiveHookId: string | null,
  reasonCode: string | null,
  message: string | null,
  modified: boolean | number,
  hooks: number | string,
  failures: number | string,
  timeouts: number | string,
  hookSetName: string,
  hookSetVersion: string,
  hookSetFingerprint: string,
];

/** One CSV line with its terminator from a row of an engine's CSV query. */
export function csvRawLine(r: CsvRaw): string {
  return `${csvFieldsLine({
    id: r[0],
    startedAt: r[1],
    durationUs: r[2],
    point: r[3],
    eventName: r[4],
    sessionId: r[5],
    turn: r[6],
    toolName: r[7],
    toolUseId: r[8],
    agent: r[9],
    status: r[10],
    decision: r[11],
    decisiveHookId: r[12],
    reasonCode: r[13],
    message: r[14],
    modified: r[15] === true || r[15] === 1,
    hooks: r[16],
    failures: r[17],
    timeouts: r[18],
    hookSetName: r[19],
    hookSetVersion: r[20],
    hookSetFingerprint: r[21],
  })}\r\n`;
}

/** The CSV row of a record. */
export function csvRow(r: ExportRecord): string {
  return csvFieldsLine({
    ...r,
    modified: r.modifiedInput !== null,
    hooks: r.outcomes.length,
    failures: r.outcomes.filter((o) => o.status === 'failed').length,
    timeouts: r.outcomes.filter((o) => o.status === 'timed_out').length,
    hookSetName: r.hookSet.name,
    hookSetVersion: r.hookSet.version,
    hookSetFingerprint: r.hookSet.fingerprint,
  });
}

/** A number column as SQLite's decimal text (`String(n)` for the integers the ledger stores); NULL stays NULL. */
const asText = (column: string) => `CAST(${column} AS TEXT)`;

/** Invocations per CSV query: a line is about 250 bytes, so a batch stays well below V8's large-object size. */
const CSV_BATCH = 128;

/** The last millisecond time whose `toISOString` SQLite's strftime writes alike (9999-12-31T23:59:59.999Z). */
const LAST_ISO_MS = 253_402_300_799_999;

/**
 * A line whose cells need nothing (`csvCell(csvText(...))` leaves every one as it is): 23 cells,
 * each empty or free of `"` `,` CR and LF, not starting with a formula character or a space,
 * not ending with a space. A cell holding a comma makes more than 23, so it does not match.
 */
const PLAIN_CELL = String.raw`(?:[^-=+@\s",\r\n](?:[^",\r\n]*[^\s",\r\n])?)?`;
const PLAIN_CSV_LINE = new RegExp(`^${PLAIN_CELL}(?:,${PLAIN_CELL}){${CSV_COLUMNS.length - 1}}$`);

/**
 * CSV lines, `CSV_BATCH` invocations per keyset query: only the columns the CSV has (never the
 * stored JSON), the outcome counts in one pass over the outcomes index (a join grouped by the
 * invocation, which the rowid order already groups), as `csvRow` writes them.
 *
 * SQLite joins each line's values with commas, unquoted (strftime writing the ISO time as
 * `Date#toISOString` does, for the years 1970 to 9999). A line that `PLAIN_CSV_LINE` matches
 * needs no quoting or formula guard in any cell and is written as it is; any other (hostile or
 * unusual text, a time outside those years) is read again as values and formatted by
 * `csvRawLine`, the JavaScript path PostgreSQL's export takes.
 *
 * Why in SQL: reading 22 values per row into JavaScript and formatting them there cost more
 * than the query, and kept memory growing with the length of the export: turning a number
 * into a string in JavaScript stores the string in V8's number-string cache, which lives in the
 * old generation, so every id and timestamp was promoted and became old-space garbage as soon
 * as the next number replaced it (about 70 KB per 2,000 rows, 40 MB before V8 ran a full
 * collection: a peak RSS of 120 MB at 1M rows). No number is turned into a string in
 * JavaScript here (the values of a re-read line come as SQLite's text, `asText`).
 */
function* csvLines(ledger: Ledger, filter: InvocationFilter): Generator<LineBatch> {
  const { where, params } = orderedFilterSql(ledger, filter, ['i.id > ?']);
  const from = 'FROM invocations i JOIN hook_sets h ON h.id = i.hook_set_id LEFT JOIN outcomes o ON o.invocation_id = i.id';
  const counts = `count(o.id), count(*) FILTER (WHERE o.status = 'failed'), count(*) FILTER (WHERE o.status = 'timed_out')`;
  const batch = prepared<unknown[], [number, string | null]>(
    ledger,
    `SELECT i.id, CASE WHEN i.started_at BETWEEN 0 AND ${LAST_ISO_MS} THEN format('${CSV_COLUMNS.map(() => '%s').join(',')}',
       i.id, i.started_at, strftime('%Y-%m-%dT%H:%M:%fZ', i.started_at / 1000.0, 'unixepoch'), i.duration_us, i.point, i.event_name,
       i.session_id, i.turn, i.tool_name, i.tool_use_id, i.agent, i.status, i.decision, i.decisive_hook_id, i.reason_code, i.message,
       CASE WHEN i.modified_input_json IS NULL THEN 'false' ELSE 'true' END, ${counts}, h.name, h.version, h.fingerprint) END
     ${from} ${where} GROUP BY i.id ORDER BY i.id LIMIT ${CSV_BATCH}`,
  ).raw();
  const values = prepared<[number], CsvRaw>(
    ledger,
    `SELECT ${asText('i.id')}, ${asText('i.started_at')}, ${asText('i.duration_us')}, i.point, i.event_name, i.session_id, ${asText('i.turn')},
       i.tool_name, i.tool_use_id, i.agent, i.status, i.decision, i.decisive_hook_id, i.reason_code, i.message,
       i.modified_input_json IS NOT NULL, ${counts}, h.name, h.version, h.fingerprint
     ${from} WHERE i.id = ? GROUP BY i.id`,
  ).raw();
  let last = 0;
  for (;;) {
    const rows = batch.all(...params, last);
    if (rows.length === 0) return;
    last = rows[rows.length - 1]![0];
    let text = '';
    let written = 0;
    for (const [id, line] of rows) {
      if (line !== null && PLAIN_CSV_LINE.test(line)) text += `${line}\r\n`;
      else {
        const row = values.get(id);
        if (row === undefined) continue; // pruned since the batch was read
        text += csvRawLine(row);
      }
      written += 1;
    }
    yield { text, rows: written };
  }
}

/**
 * The export as text, oldest first: JSON Lines, or CSV with its header line first. Each chunk
 * holds whole lines (a batch of invocations). InputError for a format that is not one.
 */
export function* exportLines(ledger: Ledger, filter: InvocationFilter, format: ExportFormat = 'jsonl'): Generator<string> {
  for (const { text } of exportBatches(ledger, filter, format)) yield text;
}

/** InputError unless `format` is an export format (the library's check; the CLI names its flag itself). */
export function checkExportFormat(format: string): asserts format is ExportFormat {
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new InputError(`format: "${format}" is not an export format (expected ${EXPORT_FORMATS.join(' or ')})`);
  }
}

function* exportBatches(ledger: Ledger, filter: InvocationFilter, format: ExportFormat): Generator<LineBatch> {
  checkExportFormat(format);
  if (format === 'csv') {
    yield { text: `${csvLine(CSV_COLUMNS)}\r\n`, rows: 0 };
    yield* csvLines(ledger, filter);
  } else yield* jsonLines(ledger, filter);
}

/**
 * Writes the export to a stream (stdout, an HTTP response, a file), one line per
 * invocation, waiting for 'drain' whenever the stream's buffer is full so that a slow
 * consumer never makes the process buffer the ledger. Returns the number of invocations.
 */
export async function writeExport(
  ledger: Ledger,
  filter: InvocationFilter,
  out: NodeJS.WritableStream,
  options: { format?: ExportFormat } = {},
): Promise<number> {
  let count = 0;
  function* counted(): Generator<string> {
    for (const { text, rows } of exportBatches(ledger, filter, options.format ?? 'jsonl')) {
      count += rows;
      yield text;
    }
  }
  await writeChunks(counted(), out);
  return count;
}

/**
 * Output characters between two young-generation collections (`scavenge`). An export turns
 * all it reads into garbage at once; left to itself V8 collects it when its 16 MB semi-spaces
 * fill, which put the CSV export's peak RSS past 100 MB. A scavenge of garbage costs almost
 * nothing (its cost is what survives), so collecting every half million characters keeps the
 * young generation small at no measurable cost in throughput (scripts/bench-export.ts).
 */
const SCAVENGE_CHARS = 524_288;

let minorGc: (() => void) | undefined;
/** A young-generation collection, through V8's `gc` (exposed to a fresh context only: the process's globals are untouched). */
function scavenge(): void {
  if (!minorGc) {
    try {
      // node:v8 loaded here, not with the module: the package root imports this module (for CSV_COLUMNS).
      (createRequire(import.meta.url)('node:v8') as typeof V8).setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as (options: { type: 'minor' }) => void;
      minorGc = () => gc({ type: 'minor' });
    } catch {
      // A runtime that does not expose it: V8 collects on its own, with a larger peak.
      minorGc = () => undefined;
    }
  }
  minorGc();
}

/**
 * Writes text chunks to a stream, coalesced into writes of at most `WRITE_CHARS` (one write
 * per line costs more than the query, and a slow consumer never holds much more than that),
 * waiting for 'drain' when the stream's buffer is full. A consumer that goes away (`| head`)
 * surfaces as an error event: reading stops then and that error is thrown. Engine-neutral:
 * the CLI feeds it `Ledger.exportText`.
 */
export async function writeChunks(chunks: Iterable<string> | AsyncIterable<string>, out: NodeJS.WritableStream): Promise<void> {
  let pending = '';
  let sinceScavenge = 0;
  let failed: Error | null = null;
  const onError = (error: Error) => (failed = error);
  out.on('error', onError);
  const flush = async () => {
    const text = pending;
    pending = '';
    for (let at = 0; at < text.length; at += WRITE_CHARS) {
      if (failed) throw failed;
      if (!out.write(text.slice(at, at + WRITE_CHARS))) await once(out, 'drain');
    }
    if ((sinceScavenge += text.length) >= SCAVENGE_CHARS) {
      sinceScavenge = 0;
      scavenge();
    }
  };
  try {
    // A synchronous source (SQLite) is read without an await per chunk.
    if (Symbol.asyncIterator in chunks) {
      for await (const chunk of chunks) {
        pending += chunk;
        if (pending.length >= WRITE_CHARS) await flush();
      }
    } else {
      for (const chunk of chunks) {
        pending += chunk;
        if (pending.length >= WRITE_CHARS) await flush();
      }
    }
    if (failed) throw failed;
    if (pending.length > 0) await flush();
  } finally {
    out.off('error', onError);
  }
}
