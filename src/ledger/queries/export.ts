import { once } from 'node:events';
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

type HookSetRow = Pick<StoredHookSetRow, 'id' | 'name' | 'version' | 'fingerprint'>;

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
  for (const { row: r, hookSet: hs, outcomes } of exportRows(ledger, filter)) {
    yield {
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
}

const j = JSON.stringify;

/**
 * The JSON Lines text of one invocation, byte for byte `JSON.stringify` of its `ExportRecord`,
 * without parsing and re-serialising the stored JSON: those columns hold `JSON.stringify`
 * output (ledger/json-text.ts), which is what re-serialising their parse gives back, so they
 * are spliced in as they are. Keys in the order `exportRecords` / `outcomeFromRow` build them.
 */
function jsonLine({ row: r, hookSet: hs, outcomes }: ExportRows): string {
  let out =
    `{"id":${r.id},"startedAt":${r.started_at},"finishedAt":${r.finished_at},"durationUs":${r.duration_us},"point":${j(r.point)}` +
    `,"eventName":${j(r.event_name)},"sessionId":${j(r.session_id)},"turn":${r.turn},"toolName":${j(r.tool_name)}` +
    `,"toolUseId":${j(r.tool_use_id)},"agent":${j(r.agent)},"cwd":${j(r.cwd)},"status":${j(r.status)},"decision":${j(r.decision)}` +
    `,"decisiveHookId":${j(r.decisive_hook_id)},"reasonCode":${j(r.reason_code)},"message":${j(r.message)}` +
    `,"hookSet":{"id":${hs.id},"name":${j(hs.name)},"version":${j(hs.version)},"fingerprint":${j(hs.fingerprint)}}` +
    `,"input":${r.input_json ?? 'null'},"modifiedInput":${r.modified_input_json ?? 'null'},"additionalContext":${r.context_json ?? '[]'}` +
    `,"redactions":${r.redactions_json ?? '[]'},"invocation":${r.invocation_json},"raw":${r.raw_json ?? 'null'}` +
    `,"pid":${r.pid},"host":${j(r.host)},"outcomes":[`;
  for (let k = 0; k < outcomes.length; k++) {
    const o = outcomes[k]!;
    out +=
      `${k === 0 ? '' : ','}{"hookId":${j(o.hook_id)},"point":${j(o.point)},"priority":${o.priority},"registrationIndex":${o.registration_index}` +
      `,"executionOrder":${o.execution_order},"mode":${j(o.mode)},"capability":${j(o.capability)},"runtime":${j(o.runtime)}` +
      `,"status":${j(o.status)},"decision":${j(o.decision)},"decisive":${o.decisive === 1},"reasonCode":${j(o.reason_code)}` +
      `,"message":${j(o.message)},"payload":${o.payload_json ?? 'null'},"modifiedInput":${o.modified_input_json ?? 'null'}` +
      `,"additionalContext":${j(o.additional_context)},"failureReason":${j(o.failure_reason)},"failureDetail":${j(o.failure_detail)}` +
      `,"skipReason":${j(o.skip_reason)},"skippedBy":${j(o.skipped_by)},"timeoutMs":${o.timeout_ms},"startedAt":${o.started_at}` +
      `,"durationUs":${o.duration_us}}`;
  }
  return `${out}]}\n`;
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
  return values
    .map((v) => {
      if (v === null) return '';
      const text = String(v);
      return /[",\r\n]/.test(text) || /^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
    })
    .join(',');
}

/**
 * A text cell as a spreadsheet will not evaluate it: agent and hook data starting with
 * = + - @ tab or CR would run as a formula in whoever opens the export (OWASP's CSV injection),
 * so such a cell gets a leading `'`. Text columns only: a negative number stays a number.
 */
export function csvText(text: string | null): string | null {
  return text !== null && /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
}

/** The CSV row of a record. */
export function csvRow(r: ExportRecord): string {
  return csvLine([
    r.id,
    r.startedAt,
    new Date(r.startedAt).toISOString(),
    r.durationUs,
    csvText(r.point),
    csvText(r.eventName),
    csvText(r.sessionId),
    r.turn,
    csvText(r.toolName),
    csvText(r.toolUseId),
    csvText(r.agent),
    csvText(r.status),
    csvText(r.decision),
    csvText(r.decisiveHookId),
    csvText(r.reasonCode),
    csvText(r.message),
    r.modifiedInput !== null,
    r.outcomes.length,
    r.outcomes.filter((o) => o.status === 'failed').length,
    r.outcomes.filter((o) => o.status === 'timed_out').length,
    csvText(r.hookSet.name),
    csvText(r.hookSet.version),
    csvText(r.hookSet.fingerprint),
  ]);
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
  const format = options.format ?? 'jsonl';
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new InputError(`format: "${format}" is not an export format (expected ${EXPORT_FORMATS.join(' or ')})`);
  }
  let count = 0;
  let chunk = format === 'csv' ? `${csvLine(CSV_COLUMNS)}\r\n` : '';
  // A consumer that goes away (`| head`) surfaces as an error event: stop reading the ledger then.
  let failed: Error | null = null;
  const onError = (error: Error) => (failed = error);
  out.on('error', onError);
  try {
    const lines =
      format === 'csv'
        ? map(exportRecords(ledger, filter), (record) => `${csvRow(record)}\r\n`)
        : map(exportRows(ledger, filter), jsonLine);
    for (const line of lines) {
      chunk += line;
      count += 1;
      // Lines are coalesced into ~64 KiB writes: one write per line costs more than the query.
      if (chunk.length >= 65_536) {
        if (failed) throw failed;
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    if (failed) throw failed;
    if (chunk.length > 0 && !out.write(chunk)) await once(out, 'drain');
    return count;
  } finally {
    out.off('error', onError);
  }
}

function* map<T, U>(items: Iterable<T>, f: (item: T) => U): Generator<U> {
  for (const item of items) yield f(item);
}
