import { getTableConfig, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import { CHAIN_ENCODING_V1 } from './integrity.js';
import { hookSets, invocations, outcomes } from './schema.js';

/** What the schema declares about a column: enough to pick the cheapest exact encoding of its values. */
interface Declared {
  type: 'integer' | 'text' | 'other';
  notNull: boolean;
  /** INTEGER PRIMARY KEY: the rowid, always an integer. */
  rowid: boolean;
  /** The values of an enumerated text column, when few and plain enough to be written as constants. */
  values: readonly string[] | undefined;
}

/** Runs of at least this many nullable columns are tested for all-NULL at once. */
const NULL_RUN = 3;
/** Enumerated columns with at most this many values are compared with each (SQLite's CASE is a chain of tests; `point`'s 35 gain nothing). */
const FEW_VALUES = 8;
const PLAIN_VALUE = /^[A-Za-z0-9_.:-]+$/;

function declared(table: SQLiteTable): Map<string, Declared> {
  return new Map(
    getTableConfig(table).columns.map((c) => {
      const sqlType = c.getSQLType();
      const type = sqlType === 'integer' ? 'integer' : sqlType === 'text' ? 'text' : 'other';
      const enumerated = c.enumValues as readonly string[] | undefined;
      const few = type === 'text' && enumerated && enumerated.length <= FEW_VALUES && enumerated.every((v) => PLAIN_VALUE.test(v));
      return [c.name, { type, notNull: c.notNull, rowid: c.primary && type === 'integer', values: few ? enumerated : undefined }];
    }),
  );
}

/** Any type, as `encode` writes it (for a column the schema does not describe); NULL for a real or a blob. */
const anyValue = (ref: string) =>
  `CASE typeof(${ref}) WHEN 'text' THEN '|s' || octet_length(${ref}) || ':' || ${ref} WHEN 'integer' THEN '|i' || ${ref} WHEN 'null' THEN '|n' END`;

/** One value as `encode` writes it, or NULL when it is not of the column's declared type (or NULL in a NOT NULL column). */
function value(ref: string, column: Declared | undefined): string {
  if (!column || column.type === 'other') return anyValue(ref);
  if (column.rowid) return `'|i' || ${ref}`;
  if (column.values) {
    // Equal only to text with these very bytes (never a blob or a number; COLLATE BINARY whatever the column declares).
    const known = column.values.map((v) => `WHEN ${ref} = '${v}' COLLATE BINARY THEN '|s${v.length}:${v}'`).join(' ');
    return `CASE ${column.notNull ? '' : `WHEN ${ref} IS NULL THEN '|n' `}${known} ELSE ${value(ref, { ...column, values: undefined })} END`;
  }
  const typed =
    column.type === 'integer'
      ? `WHEN typeof(${ref}) = 'integer' THEN '|i' || ${ref}`
      : `WHEN typeof(${ref}) = 'text' THEN '|s' || octet_length(${ref}) || ':' || ${ref}`;
  return column.notNull ? `CASE ${typed} END` : `CASE WHEN ${ref} IS NULL THEN '|n' ${typed} END`;
}

/** A row's values in `columns` order, from table alias `alias`, as one SQL text expression. */
function rowValues(alias: string, columns: readonly string[], schema: Map<string, Declared>): string {
  const nullable = (name: string) => {
    const column = schema.get(name);
    return column !== undefined && !column.notNull && !column.rowid;
  };
  const parts: string[] = [];
  for (let i = 0; i < columns.length;) {
    let end = i;
    while (end < columns.length && nullable(columns[end]!)) end++;
    if (end - i >= NULL_RUN) {
      const run = columns.slice(i, end);
      const refs = run.map((name) => `${alias}.${name}`);
      const each = run.map((name) => value(`${alias}.${name}`, schema.get(name))).join(' || ');
      parts.push(`CASE WHEN coalesce(${refs.join(', ')}) IS NULL THEN '${'|n'.repeat(run.length)}' ELSE ${each} END`);
      i = end;
    } else {
      parts.push(value(`${alias}.${columns[i]!}`, schema.get(columns[i]!)));
      i++;
    }
  }
  return parts.join(' || ');
}

function linkTextSql(): string {
  const v = CHAIN_ENCODING_V1;
  const fingerprint = value('h.fingerprint', declared(hookSets).get('fingerprint'));
  return `CASE WHEN c.kind = 'invocation' AND instr(c.rows, '~') = 0 THEN CAST(
  'hookledger-chain-v${v.version}\n' || c.prev_hash || '\n' || c.seq || '\n' || c.kind || '\n' || c.ref_id || '\n' || c.at
  || '\ni' || i.id || '\ninvocations' || ${rowValues('i', v.invocation, declared(invocations))} || ${fingerprint}
  || coalesce(group_concat('\no' || o.id || '\noutcomes' || ${rowValues('o', v.outcome, declared(outcomes))}, ''), '') AS BLOB) END`;
}

/**
 * The text `linkHash` hashes for an invocation link, built by SQLite (verify's fast path).
 *
 * verify hashes this text without turning the rows into JavaScript values, which cost most of
 * its time; building it is then most of what remains (about 190 values a link), so each value
 * is written with as few SQLite operations as its declared column allows:
 *
 * - a value is written only when it has the type its column declares (`typeof`), or is NULL in
 *   a nullable column; anything else (a blob, a real, text in an integer column, NULL in a NOT
 *   NULL one) makes the whole text NULL, and verify encodes those rows in JavaScript
 *   (`invocationEntry`, `outcomeEntry`), which writes every type exactly. So the text is never
 *   a different encoding of the same bytes: it is the JavaScript encoding or it is NULL;
 * - a run of nullable columns (an outcome's ten result columns, mostly NULL) is tested once:
 *   all NULL writes the run's `|n`s as one constant;
 * - a value of an enumerated column with few values (`mode`, `status`, ...) is compared with
 *   each and written as a constant (`|s10:foreground`); another value is written as any text;
 * - a string's length is `octet_length`, which SQLite knows without scanning the string; it is
 *   the JavaScript length (UTF-16 units) only for ASCII, and verify hashes the text only when it
 *   is ASCII without NUL (`linkHashOfText`), taking the JavaScript path otherwise.
 *
 * The declared types come from the drizzle schema and only choose the fast case: a ledger whose
 * values do not fit them (an old or edited file) verifies the same, on the JavaScript path. The
 * encoding itself (`CHAIN_ENCODING_V1`) is unchanged: test/integrity checks the bytes against it.
 *
 * Needs SQLite 3.43+ (`octet_length`; better-sqlite3 12 ships 3.49+) and, as an aggregate,
 * `LEFT JOIN invocations i ON c.kind = 'invocation' AND i.id = c.ref_id LEFT JOIN hook_sets h
 * ON h.id = i.hook_set_id LEFT JOIN outcomes o ON c.kind = 'invocation' AND o.invocation_id =
 * c.ref_id ... GROUP BY c.seq` (about 9% less CPU than a subquery per link). The outcomes come
 * in the order of the `outcomes_invocation` index, which is id order; were they not, the text
 * would differ from the encoding and verify would take the JavaScript path, never accept a
 * wrong link. Links with a pending background outcome (projected, `~` in `rows`) always do.
 */
export function invocationLinkTextSql(): string {
  // Built on first use, not at load: the package root imports this module, and a hook config that
  // imports 'hookledger' should not pay for it.
  return (built ??= linkTextSql());
}

let built: string | undefined;
