import { sql, type SQL } from 'drizzle-orm';
import {
  bigint,
  boolean,
  customType,
  foreignKey,
  index,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  type AnyPgColumn,
  type PgColumnBuilderBase,
  type PgTableWithColumns,
} from 'drizzle-orm/pg-core';
import { getTableConfig, type SQLiteColumn, type SQLiteTable } from 'drizzle-orm/sqlite-core';
import * as sqlite from '../schema.js';

/**
 * The PostgreSQL ledger's tables, derived from the SQLite schema (src/ledger/schema.ts) so that
 * the data model is described once: every table, column, nullability, default, index (with its
 * partial-index condition), foreign key and composite key is read from the SQLite table and
 * rebuilt with pg-core. Only what PostgreSQL needs differently is stated here:
 *
 * - integers are `bigint` (times are ms since the epoch, durations µs: beyond 32 bits), read as
 *   JS numbers; an autoincrement key is an identity column;
 * - `{ mode: 'boolean' }` integers are `boolean`; blobs are `bytea`;
 * - the tamper-evidence chain has one chain per writer (`writer_id` in the key), so that writers
 *   on different machines never wait for one chain head;
 * - `invocations.writer_id` names the writer whose lease decides when its `running` rows are
 *   interrupted (a pid means nothing on another host);
 * - `writers` (PostgreSQL only): each writer's chain head and lease.
 *
 * drizzle-kit generates migrations/postgres/ from this file (drizzle.pg.config.ts).
 */

const bytea = customType<{ data: Buffer; driverData: Buffer }>({ dataType: () => 'bytea' });

type Columns = Record<string, PgColumnBuilderBase>;

/** A PostgreSQL table derived from a SQLite one; columns keyed by their TypeScript names. */
export type DerivedTable = PgTableWithColumns<{
  name: string;
  schema: undefined;
  columns: Record<string, AnyPgColumn>;
  dialect: 'pg';
}>;

interface Extra {
  /** Columns PostgreSQL has in addition, by TypeScript name. */
  columns?: Columns;
  /** Replaces the SQLite primary key (column names). */
  primaryKey?: string[];
  /** Replaces the columns of SQLite indexes of these names (column names); the index keeps its name, uniqueness and condition. */
  indexColumns?: Record<string, string[]>;
  /** Makes SQLite indexes of these names partial on PostgreSQL (they must have no condition of their own). */
  indexWhere?: Record<string, SQL>;
  /** SQLite indexes PostgreSQL does without (another index serves their queries there). */
  withoutIndexes?: string[];
  /** SQLite indexes of one column that are hash indexes on PostgreSQL (only ever looked up by equality). */
  hashIndexes?: string[];
  /** Additional indexes (column names, optional partial-index condition). */
  indexes?: Record<string, { columns: string[]; where?: SQL; unique?: boolean }>;
  /** Foreign keys of the SQLite table that PostgreSQL does not enforce (by column name); see `outcomes`. */
  unenforcedReferences?: string[];
}

/** Tables derived so far, with their column-name → TypeScript-key maps (foreign keys point at them). */
const derived = new Map<SQLiteTable, { table: DerivedTable; keyOf: Map<string, string> }>();

function columnFor(column: SQLiteColumn, primaryKeyReplaced: boolean): PgColumnBuilderBase {
  const name = column.name;
  let builder;
  switch (column.columnType) {
    case 'SQLiteInteger':
      builder = bigint(name, { mode: 'number' });
      break;
    case 'SQLiteBoolean':
      builder = boolean(name);
      break;
    case 'SQLiteText':
      builder = text(name);
      break;
    case 'SQLiteBlobBuffer':
      builder = bytea(name);
      break;
    default:
      throw new Error(`no PostgreSQL type for SQLite column ${name} (${column.columnType}): add one in ledger/postgres/schema.ts`);
  }
  const autoIncrement = (column as unknown as { autoIncrement?: boolean }).autoIncrement === true;
  if (column.primary && !primaryKeyReplaced) {
    const key = builder.primaryKey();
    return autoIncrement && column.columnType === 'SQLiteInteger'
      ? (key as ReturnType<ReturnType<typeof bigint>['primaryKey']>).generatedByDefaultAsIdentity()
      : key;
  }
  if (column.notNull) builder = builder.notNull();
  if (column.hasDefault && column.default !== undefined) builder = builder.default(column.default as never);
  return builder;
}

/** Rebuilds a SQLite table in pg-core (see the file comment), with PostgreSQL's additions. */
function derive(source: SQLiteTable, extra: Extra = {}): DerivedTable {
  const config = getTableConfig(source);
  const keyOf = new Map<string, string>();
  const columns: Columns = {};
  for (const [key, column] of Object.entries(source) as [string, unknown][]) {
    if (!config.columns.includes(column as SQLiteColumn)) continue;
    const c = column as SQLiteColumn;
    keyOf.set(c.name, key);
    columns[key] = columnFor(c, extra.primaryKey !== undefined);
  }
  for (const [key, builder] of Object.entries(extra.columns ?? {})) {
    columns[key] = builder;
    keyOf.set((builder as unknown as { config: { name: string } }).config.name, key);
  }
  const table = pgTable(config.name, columns, (t) => {
    const col = (name: string) => {
      const column = (t as Record<string, AnyPgColumn>)[keyOf.get(name) ?? ''];
      if (!column) throw new Error(`derived table ${config.name} has no column ${name}`);
      return column;
    };
    const cols = (names: string[]) => names.map(col) as [AnyPgColumn, ...AnyPgColumn[]];
    const constraints = [];
    for (const ix of config.indexes) {
      const name = ix.config.name;
      if (extra.withoutIndexes?.includes(name)) continue;
      const names = ix.config.columns.map((c) => (c as SQLiteColumn).name);
      const replaced = extra.indexColumns?.[name];
      const hash = extra.hashIndexes?.includes(name);
      if (hash && (ix.config.unique || (replaced ?? names).length !== 1))
        throw new Error(`index ${name}: a hash index has one column and is not unique`);
      let built = hash
        ? index(name).using('hash', col(names[0]!))
        : (ix.config.unique ? uniqueIndex(name) : index(name)).on(...cols(replaced ?? names));
      const where = extra.indexWhere?.[name];
      if (where && ix.config.where)
        throw new Error(`index ${name} already has a condition on SQLite: say the whole condition in ledger/postgres/schema.ts`);
      if (where ?? ix.config.where) built = built.where((where ?? ix.config.where) as SQL);
      constraints.push(built);
    }
    for (const [name, ix] of Object.entries(extra.indexes ?? {})) {
      const built = (ix.unique ? uniqueIndex(name) : index(name)).on(...cols(ix.columns));
      constraints.push(ix.where ? built.where(ix.where) : built);
    }
    for (const fk of config.foreignKeys) {
      const ref = fk.reference();
      if (ref.columns.some((c) => extra.unenforcedReferences?.includes(c.name))) continue;
      const target = derived.get(ref.foreignTable as SQLiteTable);
      if (!target) throw new Error(`derive ${getTableConfig(ref.foreignTable as SQLiteTable).name} before ${config.name}`);
      let built = foreignKey({
        name: fk.getName(),
        columns: cols(ref.columns.map((c) => c.name)),
        foreignColumns: ref.foreignColumns.map(
          (c) => (target.table as unknown as Record<string, AnyPgColumn>)[target.keyOf.get(c.name)!]!,
        ) as [AnyPgColumn, ...AnyPgColumn[]],
      });
      if (fk.onDelete) built = built.onDelete(fk.onDelete);
      constraints.push(built);
    }
    const key = extra.primaryKey ?? config.primaryKeys[0]?.columns.map((c) => c.name);
    if (key && (extra.primaryKey || config.primaryKeys.length > 0)) constraints.push(primaryKey({ columns: cols(key) }));
    return constraints;
  }) as unknown as DerivedTable;
  derived.set(source, { table, keyOf });
  return table;
}

export const hookSets = derive(sqlite.hookSets);

export const invocations = derive(sqlite.invocations, {
  // `source_ref`: a shipped invocation's id in its source's ledger (`writer_id` is then the source id; docs/ship.md).
  columns: { writerId: text('writer_id').notNull(), sourceRef: bigint('source_ref', { mode: 'number' }) },
  indexes: {
    // Recovery looks up a dead writer's running rows; the SQLite partial index on status serves the rest.
    invocations_running_writer: { columns: ['writer_id'], where: sql`status = 'running'` },
    // Denials by reason code, newest first. PostgreSQL estimates `reason_code = x AND decision = 'deny'`
    // as if the two were independent (a reason code is only ever set on a deny), so with only
    // `invocations_reason` it bitmap-scanned every row of the reason and sorted them: 34-134 ms
    // at 1M invocations instead of reading the page's 51 rows (scripts/bench-postgres.ts).
    invocations_deny_reason: { columns: ['reason_code', 'id'], where: sql`decision = 'deny'` },
    invocations_source_ref: { columns: ['writer_id', 'source_ref'], where: sql`source_ref IS NOT NULL`, unique: true },
    // Reports by source (`--source`, docs/ship.md): one source's rows newest first, instead of walking every
    // source's and filtering (a denials page of 1 source in 50 at 200k invocations: 283 buffers instead of 2,714).
    invocations_writer: { columns: ['writer_id', 'id'] },
  },
  // The centre's index audit (migration 0010, docs/postgres.md "Indexes"): each index here costs every shipped invocation
  // an entry, so one whose query PostgreSQL answers as well another way goes or becomes partial.
  // - `invocations_running` (status, running rows only): `invocations_running_writer` holds the same rows and serves
  //   `status = 'running'` alone as well (a few entries either way).
  withoutIndexes: ['invocations_running'],
  // `invocations_tool_use_id`: explain's lookups are equalities, and tool-use ids are random text, so each b-tree entry
  // went to a random leaf after comparing long strings; a hash index costs about half (1.5 -> 0.8 µs per row).
  hashIndexes: ['invocations_tool_use_id'],
  indexWhere: {
    // `decision` filters: 'none' (no hook decided) is most rows (86% of a generated ledger), and a filter on it walks
    // the primary key as fast; every other decision (deny 5%, allow 8%, ask 0.1%) keeps its id-ordered range.
    invocations_decision: sql`decision <> 'none'`,
    // `point` filters: the two tool-use points are each about half of all invocations, which a walk of the primary key
    // serves as fast; the rare points (session start/end, prompts, stop, failures: 7%) keep their id-ordered range.
    invocations_point: sql`point <> 'pre_tool_use' AND point <> 'post_tool_use'`,
  },
});

export const outcomes = derive(sqlite.outcomes, {
  // A shipped outcome's id in its source's ledger (its background link names it so).
  columns: { sourceRef: bigint('source_ref', { mode: 'number' }) },
  // No foreign key to invocations (migration 0007, docs/ship.md "Central schema"): its RI trigger ran one lookup per outcome row, about a
  // fifth of the centre's work per shipped invocation. Every writer keeps the invariant itself instead: outcomes go in with their invocation
  // (ship: the same transaction; the PostgreSQL ledger writer: the transaction that updates, and so locks, the invocation row), prune deletes
  // outcomes explicitly before their invocations, and `verify` names an outcome whose invocation is gone, with its source.
  unenforcedReferences: ['invocation_id'],
  // Hook health's exact percentiles read this index (queries/health.ts); the rollup reads outcomes through invocations, so PostgreSQL needs
  // neither SQLite's covering columns nor its duration-first order. Ordered by start within a hook, a shipped batch (a narrow time range)
  // adds its entries to a few leaf pages per hook instead of one random page per outcome: that index was the largest cost of a shipped
  // invocation at the centre after the foreign key (migration 0008, docs/ship.md "Central schema"), and a percentile now reads only
  // the window's entries (at most EXACT_PERCENTILE_LIMIT runs) instead of a duration bucket's over the whole history.
  indexColumns: { outcomes_health: ['hook_id', 'started_at', 'duration_us'] },
  // No index on `source_ref` (migration 0010): ship finds a shipped outcome through its invocation's source id
  // (`invocations_source_ref`, then `outcomes_invocation`), which costs nothing per outcome inserted; the index cost
  // every shipped outcome (~6 per invocation) an entry for lookups only background completions make.
});
export const replayRuns = derive(sqlite.replayRuns);
export const replayResults = derive(sqlite.replayResults);

export const chain = derive(sqlite.chain, {
  columns: { writerId: text('writer_id').notNull() },
  primaryKey: ['writer_id', 'seq'],
  // A shipped source's links keep their own ref ids (docs/ship.md), which other sources' repeat.
  indexColumns: { chain_ref: ['kind', 'ref_id', 'writer_id'] },
});

export const legalHolds = derive(sqlite.legalHolds);
export const pruneCheckpoints = derive(sqlite.pruneCheckpoints, {
  // A shipped checkpoint: its source and its id there (its link names it so).
  columns: { sourceId: text('source_id'), sourceRef: bigint('source_ref', { mode: 'number' }) },
  indexes: {
    prune_checkpoints_source_ref: { columns: ['source_id', 'source_ref'], where: sql`source_ref IS NOT NULL`, unique: true },
  },
});
export const healthRollups = derive(sqlite.healthRollups);
export const healthRollupHours = derive(sqlite.healthRollupHours);
export const healthRollupState = derive(sqlite.healthRollupState);
/** Derived like the rest; on PostgreSQL nothing maintains it yet (SQLite keeps it with triggers). */
export const sessionSummaries = derive(sqlite.sessionSummaries);

/**
 * One row per writer: a process or group of processes that appends one tamper-evidence chain
 * (ledger/postgres/writer.ts). Its chain head lives here so that the commit of a record locks
 * this row, not a table; its lease says until when it is known alive.
 */
export const writers = pgTable('writers', {
  id: text('id').primaryKey(),
  host: text('host').notNull(),
  headSeq: bigint('head_seq', { mode: 'number' }).notNull().default(0),
  headHash: text('head_hash').notNull(),
  createdAt: bigint('created_at', { mode: 'number' }).notNull(),
  /** ms since the epoch until which the writer is known alive; after it, its `running` rows may be interrupted. */
  leaseUntil: bigint('lease_until', { mode: 'number' }).notNull(),
});

/**
 * Machines whose SQLite ledgers `hookledger ship` copies here (docs/ship.md). A source is also a
 * `writers` row of the same id whose chain is the source's own, shipped verbatim: its head is
 * what has been shipped (the high-water mark), moved in the transaction that ships the records.
 */
export const shipSources = pgTable('ship_sources', {
  id: text('id').primaryKey(),
  host: text('host').notNull(),
  firstShippedAt: bigint('first_shipped_at', { mode: 'number' }).notNull(),
  lastShippedAt: bigint('last_shipped_at', { mode: 'number' }).notNull(),
});

/** A source's hook set ids: the central hook set (one per fingerprint) each local id names, for verify. */
export const shipHookSets = pgTable(
  'ship_hook_sets',
  {
    sourceId: text('source_id').notNull(),
    localId: bigint('local_id', { mode: 'number' }).notNull(),
    hookSetId: bigint('hook_set_id', { mode: 'number' })
      .notNull()
      .references(() => hookSets.id as AnyPgColumn),
  },
  (t) => [primaryKey({ columns: [t.sourceId, t.localId] })],
);
