import type pg from 'pg';
import {
  checkExportFormat,
  CSV_COLUMNS,
  csvLine,
  csvRawLine,
  exportRecordFrom,
  type ExportFormat,
  type CsvRaw,
  type ExportRecord,
  type HookSetRow,
} from '../../queries/export.js';
import type { InvocationFilter } from '../../queries/filters.js';
import { OUTCOME_ORDER, type InvocationRow, type OutcomeRow } from '../../rows.js';
import { pgFilterSql } from './filters.js';
import { numbered } from '../placeholders.js';
import { asReadError } from './read.js';

/**
 * `export` on PostgreSQL: the same records, lines and bytes as on SQLite (ledger/queries/export.ts),
 * built by its mappers (`exportRecordFrom`, `csvRawLine`): a JSON line is `JSON.stringify` of
 * the record, which is what SQLite assembles in SQL.
 *
 * Streamed in keyset batches (`id > last ORDER BY id LIMIT n`, one short query each, outcomes
 * of the batch in a second), never loaded whole: memory holds at most two batches (the one
 * being written and the next, fetched meanwhile), and no transaction stays open while a slow
 * consumer reads. As on SQLite, invocations recorded during an export are included once if
 * they match, never twice.
 */

/** The filter's condition with the keyset bound last (`i.id > ?`); its lookups' failures are read errors. */
async function filterOf(pool: pg.Pool, location: string, filter: InvocationFilter) {
  try {
    return await pgFilterSql(pool, filter, ['i.id > ?']);
  } catch (error) {
    throw asReadError(location, 'export', error);
  }
}

/** Invocations per query: a few hundred KiB of rows whatever the ledger size, few round trips. */
const BATCH = 500;
/** Characters per yielded text chunk (below V8's large-object size, as on SQLite). */
const CHUNK_CHARS = 32_768;

/** Outcome rows with `decisive` as the 0/1 the shared mapping reads. */
const OUTCOMES_OF = {
  name: 'hl_export_outcomes',
  text: `SELECT *, decisive::int AS decisive FROM outcomes WHERE invocation_id = ANY($1::bigint[]) ORDER BY invocation_id, ${OUTCOME_ORDER}`,
};
const HOOK_SET = { name: 'hl_export_hook_set', text: 'SELECT id, name, version, fingerprint FROM hook_sets WHERE id = $1' };

interface Batch<R> {
  rows: R[];
  last: number;
}

/**
 * Runs `fetch(last)` batch after batch, starting the next query while the current batch is
 * consumed; stops at an empty batch. A consumer that stops early leaves no rejection unhandled.
 */
async function* prefetched<R>(fetch: (last: number) => Promise<Batch<R> | null>): AsyncGenerator<R[]> {
  let pending = fetch(0);
  try {
    for (;;) {
      const batch = await pending;
      if (batch === null) return;
      pending = fetch(batch.last);
      yield batch.rows;
    }
  } finally {
    pending.catch(() => undefined);
  }
}

/** Every invocation the filter selects, oldest first, with its outcomes. */
export async function* exportRecordsPostgres(pool: pg.Pool, location: string, filter: InvocationFilter): AsyncGenerator<ExportRecord> {
  const { where, params } = await filterOf(pool, location, filter);
  const text = numbered(`SELECT i.* FROM invocations i ${where} ORDER BY i.id LIMIT ${BATCH}`);
  const hookSets = new Map<number, HookSetRow>();
  const fetch = async (last: number): Promise<Batch<ExportRecord> | null> => {
    try {
      const rows = (await pool.query<InvocationRow>(text, [...params, last])).rows;
      if (rows.length === 0) return null;
      const outcomes = await pool.query<OutcomeRow>({ ...OUTCOMES_OF, values: [rows.map((r) => r.id)] });
      const grouped = new Map<number, OutcomeRow[]>();
      for (const o of outcomes.rows) {
        let list = grouped.get(o.invocation_id);
        if (!list) grouped.set(o.invocation_id, (list = []));
        list.push(o);
      }
      const records: ExportRecord[] = [];
      for (const r of rows) {
        let hs = hookSets.get(r.hook_set_id);
        if (!hs) hookSets.set(r.hook_set_id, (hs = (await pool.query<HookSetRow>({ ...HOOK_SET, values: [r.hook_set_id] })).rows[0]!));
        records.push(exportRecordFrom(r, hs, grouped.get(r.id) ?? []));
      }
      return { rows: records, last: rows[rows.length - 1]!.id };
    } catch (error) {
      throw asReadError(location, 'export', error);
    }
  };
  for await (const records of prefetched(fetch)) yield* records;
}

/**
 * CSV rows: only the columns the CSV has (never the stored JSON), the outcome counts in one
 * aggregate per invocation (SQLite counts with three index lookups; here one lateral pass over
 * `outcomes_invocation` does all three).
 */
async function* csvLines(pool: pg.Pool, location: string, filter: InvocationFilter): AsyncGenerator<string[]> {
  const { where, params } = await filterOf(pool, location, filter);
  const text = numbered(
    `SELECT i.id, i.started_at, i.duration_us, i.point, i.event_name, i.session_id, i.turn, i.tool_name, i.tool_use_id, i.agent,
       i.status, i.decision, i.decisive_hook_id, i.reason_code, i.message, i.modified_input_json IS NOT NULL,
       o.hooks, o.failures, o.timeouts, h.name, h.version, h.fingerprint
     FROM invocations i JOIN hook_sets h ON h.id = i.hook_set_id
     CROSS JOIN LATERAL (SELECT count(*) AS hooks, count(*) FILTER (WHERE status = 'failed') AS failures,
       count(*) FILTER (WHERE status = 'timed_out') AS timeouts FROM outcomes WHERE invocation_id = i.id) o
     ${where} ORDER BY i.id LIMIT ${BATCH}`,
  );
  const fetch = async (last: number): Promise<Batch<string> | null> => {
    try {
      const rows = (await pool.query<CsvRaw>({ text, values: [...params, last], rowMode: 'array' })).rows;
      if (rows.length === 0) return null;
      const lines = rows.map(csvRawLine);
      return { rows: lines, last: Number(rows[rows.length - 1]![0]) };
    } catch (error) {
      throw asReadError(location, 'export', error);
    }
  };
  yield* prefetched(fetch);
}

/** JSON Lines: `JSON.stringify` of each record, the bytes SQLite's export writes. */
async function* jsonLines(pool: pg.Pool, location: string, filter: InvocationFilter): AsyncGenerator<string[]> {
  let lines: string[] = [];
  for await (const record of exportRecordsPostgres(pool, location, filter)) {
    lines.push(`${JSON.stringify(record)}\n`);
    if (lines.length >= 64) {
      yield lines;
      lines = [];
    }
  }
  if (lines.length > 0) yield lines;
}

/**
 * The export as text, oldest first: JSON Lines, or CSV with its header line first. Each chunk
 * holds whole lines, joined up to about `CHUNK_CHARS`. InputError for a format that is not one.
 */
export async function* exportTextPostgres(
  pool: pg.Pool,
  location: string,
  filter: InvocationFilter,
  format: ExportFormat = 'jsonl',
): AsyncGenerator<string> {
  checkExportFormat(format);
  let chunk = format === 'csv' ? `${csvLine(CSV_COLUMNS)}\r\n` : '';
  for await (const lines of format === 'csv' ? csvLines(pool, location, filter) : jsonLines(pool, location, filter)) {
    for (const line of lines) {
      chunk += line;
      if (chunk.length >= CHUNK_CHARS) {
        yield chunk;
        chunk = '';
      }
    }
  }
  if (chunk.length > 0) yield chunk;
}
