import type pg from 'pg';
import { storedValue } from './text.js';

/**
 * `COPY table (columns) FROM STDIN` in PostgreSQL's text format, over plain node-postgres: the
 * bulk path of `ship` (ship-sink.ts) and of the PostgreSQL ledger generator
 * (scripts/generate-ledger-postgres.ts). COPY loads rows several to a heap page and WAL record
 * and skips the executor's per-row work that `INSERT … SELECT FROM unnest(…)` pays; the client
 * writes one line per row instead of one array literal per column.
 *
 * Text is stored as the PostgreSQL ledger stores it (text.ts: NUL becomes U+2400, a lone
 * surrogate U+FFFD×3), then escaped for the text format: backslash, newline, carriage return
 * and tab become `\\`, `\n`, `\r`, `\t`; everything else (quotes, any Unicode) goes as UTF-8,
 * unchanged. With every backslash escaped, no value can end the data early (`\.`).
 */

const COPY_SPECIAL = /[\\\n\r\t]/;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One value in COPY's text format: `\N` for null; booleans `t`/`f` (a boolean column also reads 0/1). */
export function copyField(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') {
    const text = storedValue(value);
    return COPY_SPECIAL.test(text) ? text.replace(/[\\\n\r\t]/g, (c) => COPY_ESCAPES[c]!) : text;
  }
  if (typeof value === 'boolean') return value ? 't' : 'f';
  return String(value);
}

/**
 * copyField in SQLite's SQL, for COPY text that SQLite builds itself (ship-source.ts), so that
 * JavaScript never materialises the rows (measured: building rows and lines in JavaScript was
 * most of ship's CPU): the value of `expr`, a column whose declared type is `type`, as one field.
 * Only what must be escaped field by field is here (backslash, first, and tab; NULL as `\N`):
 * copyLineSql does the rest once per line. An integer column's value goes as it is: anything
 * but an integer there (hookledger writes none) fails the COPY instead of shifting fields.
 */
export function copyFieldSql(expr: string, type: string): string {
  if (type === 'integer') return `coalesce(${expr}, '\\N')`;
  return `coalesce(iif(instr(${expr}, '\\') OR instr(${expr}, char(9)), replace(replace(${expr}, '\\', '\\\\'), char(9), '\\t'), ${expr}), '\\N')`;
}

/**
 * One COPY line (without its newline) of `fields` (copyFieldSql expressions) in SQLite's SQL:
 * joined by tabs, then what copyField escapes that no field separator or escape contains, once
 * for the whole line: newline and carriage return. The stored form of text (text.ts: NUL and
 * the characters that escape it) is the caller's, with storedValue on whole lines, which it
 * changes as it changes each value: no separator or COPY escape holds those characters. (SQLite's
 * replace() cannot find NUL.)
 */
export function copyLineSql(fields: readonly string[]): string {
  return `replace(replace(concat_ws(char(9), ${fields.join(', ')}), char(10), '\\n'), char(13), '\\r')`;
}

/** One row: fields separated by tabs, ended by a newline. */
export function copyLine(values: readonly unknown[]): string {
  let line = copyField(values[0]);
  for (let i = 1; i < values.length; i++) line += '\t' + copyField(values[i]);
  return line + '\n';
}

/**
 * A COPY FROM STDIN as a node-postgres Submittable (the driver's extension point for protocols
 * it does not wrap; no copy-streams package needed). `done` settles at ReadyForQuery with the
 * number of rows copied, or the server's error.
 */
class CopyIn implements pg.Submittable {
  readonly done: Promise<number>;
  private settle!: (error: Error | null, rows: number) => void;
  private error: Error | null = null;
  private rows = 0;

  constructor(
    private readonly text: string,
    private readonly data: Buffer,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.settle = (error, rows) => (error ? reject(error) : resolve(rows));
    });
  }

  submit(connection: pg.Connection): void {
    (connection as unknown as { query(text: string): void }).query(this.text);
  }

  handleCopyInResponse(connection: pg.Connection): void {
    const c = connection as unknown as { sendCopyFromChunk(chunk: Buffer): void; endCopyFrom(): void };
    // CopyData messages of at most 1 MB each.
    for (let offset = 0; offset < this.data.length; offset += 1 << 20) c.sendCopyFromChunk(this.data.subarray(offset, offset + (1 << 20)));
    c.endCopyFrom();
  }

  handleCommandComplete(message: { text?: string }): void {
    this.rows = Number(/^COPY (\d+)/.exec(message.text ?? '')?.[1] ?? 0);
  }
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}

  handleError(error: Error): void {
    this.error = error;
    this.settle(error, 0);
  }

  handleReadyForQuery(): void {
    this.settle(this.error, this.rows);
  }
}

/** Copies `data` (COPY text lines, e.g. from copyLine) into `table`'s `columns`; the number of rows copied. */
export async function copyIn(client: pg.ClientBase, table: string, columns: readonly string[], data: string | Buffer): Promise<number> {
  if (data.length === 0) return 0;
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  return client.query(new CopyIn(`COPY ${table} (${columns.join(', ')}) FROM STDIN`, bytes)).done;
}
