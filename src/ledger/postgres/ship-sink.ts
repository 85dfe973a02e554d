import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import type pg from 'pg';
import { LedgerError } from '../../domain/errors.js';
import { GENESIS_HASH } from '../integrity.js';
import {
  CHECKPOINT_COLUMNS,
  HOLD_COLUMNS,
  HOOK_SET_COLUMNS,
  INVOCATION_COPY_COLUMNS,
  LINK_COPY_COLUMNS,
  OUTCOME_COLUMNS,
  OUTCOME_COPY_COLUMNS,
  type LocalBatch,
  type Row,
} from '../ship-source.js';
import * as central from './schema.js';
import { copyIn } from './copy.js';
import { storedValue } from './text.js';

/**
 * The central side of `hookledger ship` (src/ship/, docs/ship.md): one batch of a source's records committed into the PostgreSQL
 * ledger together with the source's high-water mark, in one transaction (docs/ship.md).
 *
 * A source is a writer (`writers` row, id = source id) whose chain is the source's own: its links
 * are inserted verbatim and its head is what has been shipped. The batch transaction first locks
 * that row (`FOR UPDATE`), then takes the local records after the head it holds (read then, or read
 * ahead while the previous batch was written if that read began at this very head), so two ship
 * processes for one source take turns batch by batch and can neither ship a link twice nor skip
 * one; a ship killed at any moment leaves either the whole batch and the new head, or neither.
 *
 * Shipped rows get central ids; their source ids are kept (`source_ref`, `ship_hook_sets`) so
 * that verify can rebuild each source's records exactly as the source holds them.
 *
 * Invocations, outcomes and links go in with COPY (copy.ts), one per table per batch, with the
 * central invocation ids taken from their sequence first (the outcomes name them); the session
 * summaries of a batch are added in one statement (migration 0006) instead of a row trigger per
 * invocation. The rare rest (hook sets, checkpoints, completions, holds) uses one
 * `INSERT … SELECT FROM unnest(arrays)` per table: no parameter-count limit whatever the batch.
 */

/** A source's lease never ends: recovery must not judge shipped rows by a lease they never had. */
const NEVER = Number.MAX_SAFE_INTEGER;

/** PostgreSQL type of each column of a central table, by name. */
function typesOf(table: PgTable): Map<string, string> {
  return new Map(getTableConfig(table).columns.map((c) => [c.name, c.getSQLType()]));
}

/** `INSERT INTO table (columns…, extra…) SELECT u.*, $k… FROM unnest($1::t[], …) u`, for `columns` bound as arrays. */
function unnestInsert(table: PgTable, columns: string[], scalars: string[] = [], tail = ''): string {
  const types = typesOf(table);
  const arrays = columns.map((c, i) => `$${i + 1}::${types.get(c)}[]`);
  const scalarParams = scalars.map((c, i) => `$${columns.length + i + 1}::${types.get(c)}`);
  return `INSERT INTO ${getTableConfig(table).name} (${[...columns, ...scalars].join(', ')})
    SELECT u.*${scalarParams.map((p) => `, ${p}`).join('')} FROM unnest(${arrays.join(', ')}) u ${tail}`;
}

/** Column-major arrays of `rows`, picking `columns` of `from` and mapping values per column. */
function arraysOf(
  rows: Row[],
  from: string[],
  columns: string[],
  map: (column: string, value: unknown) => unknown = (_, v) => v,
): unknown[][] {
  const positions = columns.map((c) => from.indexOf(c));
  return columns.map((column, k) => rows.map((row) => map(column, storedValue(row[positions[k]!]))));
}

const without = (columns: string[], ...names: string[]) => columns.filter((c) => !names.includes(c));

// Invocations, outcomes and links go in with COPY (copy.ts), as the COPY text the source read (ship-source.ts): the central id and
// hook set id (invocations) or invocation id (outcomes) are put before each line here.
const RESERVE_INVOCATION_IDS = `SELECT nextval(pg_get_serial_sequence('invocations', 'id')) AS id FROM generate_series(1, $1)`;
const CHECKPOINT_INSERT_COLUMNS = [...without(CHECKPOINT_COLUMNS, 'id'), 'source_ref'];
const INSERT_CHECKPOINTS = unnestInsert(central.pruneCheckpoints, CHECKPOINT_INSERT_COLUMNS, ['source_id']);
const HOOK_SET_INSERT_COLUMNS = without(HOOK_SET_COLUMNS, 'id');
const INSERT_HOOK_SETS = unnestInsert(central.hookSets, HOOK_SET_INSERT_COLUMNS, [], 'ON CONFLICT (fingerprint) DO NOTHING');

// A background completion sets every column its link covers on the outcome shipped with its invocation. The outcome is
// found through its invocation: the source's invocation id (`invocation_id` of the source's row) is the central
// invocation's `source_ref` (`invocations_source_ref`), then its outcomes (`outcomes_invocation`); outcomes have no
// index on `source_ref`, which would cost every shipped outcome an entry (migration 0010, docs/postgres.md "Indexes").
const COMPLETION_SET_COLUMNS = without(OUTCOME_COLUMNS, 'id', 'invocation_id');
const COMPLETION_COLUMNS = ['source_ref', 'invocation_id', ...COMPLETION_SET_COLUMNS];
const COMPLETE_OUTCOMES = (() => {
  const types = typesOf(central.outcomes);
  return `UPDATE outcomes o SET ${COMPLETION_SET_COLUMNS.map((c) => `${c} = u.${c}`).join(', ')}
    FROM unnest(${COMPLETION_COLUMNS.map((c, i) => `$${i + 1}::${types.get(c)}[]`).join(', ')}) AS u(${COMPLETION_COLUMNS.join(', ')}), invocations i
    WHERE i.writer_id = $${COMPLETION_COLUMNS.length + 1} AND i.source_ref IS NOT NULL AND i.source_ref = u.invocation_id
      AND o.invocation_id = i.id AND o.source_ref = u.source_ref`;
})();

/** 0/1 as PostgreSQL's boolean for the `decisive` column. */
const outcomeValue = (column: string, value: unknown) => (column === 'decisive' && value !== null ? value === 1 || value === true : value);

/** What one batch (or a whole run) shipped. */
export interface ShipCounts {
  links: number;
  invocations: number;
  outcomes: number;
  backgroundCompletions: number;
  checkpoints: number;
  hookSets: number;
  holds: number;
  /** Background outcomes shipped pending that the source's recovery has since marked interrupted. */
  interrupted: number;
}

export const zeroCounts = (): ShipCounts => ({
  links: 0,
  invocations: 0,
  outcomes: 0,
  backgroundCompletions: 0,
  checkpoints: 0,
  hookSets: 0,
  holds: 0,
  interrupted: 0,
});

export function addCounts(total: ShipCounts, more: ShipCounts): void {
  for (const key of Object.keys(total) as (keyof ShipCounts)[]) total[key] += more[key];
}

/** The source's position at the centre: the last link shipped. */
export interface ShippedHead {
  seq: number;
  hash: string;
}

/** Registers the source (its writer row and its `ship_sources` row); idempotent. */
export async function registerSource(client: pg.ClientBase, sourceId: string, host: string): Promise<ShippedHead> {
  const now = Date.now();
  await client.query(
    `INSERT INTO writers (id, host, head_seq, head_hash, created_at, lease_until) VALUES ($1, $2, 0, $3, $4, $5) ON CONFLICT (id) DO NOTHING`,
    [sourceId, host, GENESIS_HASH, now, NEVER],
  );
  await client.query(
    `INSERT INTO ship_sources (id, host, first_shipped_at, last_shipped_at) VALUES ($1, $2, $3, $3)
     ON CONFLICT (id) DO UPDATE SET host = EXCLUDED.host`,
    [sourceId, host, now],
  );
  const row = (
    await client.query<{ head_seq: number; head_hash: string }>('SELECT head_seq, head_hash FROM writers WHERE id = $1', [sourceId])
  ).rows[0]!;
  return { seq: row.head_seq, hash: row.head_hash };
}

/**
 * Copies the ledger's legal holds (a hold placed centrally or earlier stays; see docs/ship.md) through
 * `hl_ship_holds` (migration 0009), which runs as the schema's owner: a machine's least-privilege role
 * needs no right on `legal_holds`, so it cannot list which sessions are held. Returns how many were new.
 */
export async function shipHolds(client: pg.ClientBase, holds: Row[]): Promise<number> {
  if (holds.length === 0) return 0;
  const rows = holds.map((row) => Object.fromEntries(HOLD_COLUMNS.map((column, k) => [column, storedValue(row[k])])));
  const result = await client.query<{ added: number }>('SELECT hl_ship_holds($1::jsonb) AS added', [JSON.stringify(rows)]);
  return result.rows[0]!.added;
}

/** Source ids of the source's outcomes the centre holds as pending (few: background hooks whose completion is not shipped yet). */
export async function shippedPending(client: pg.ClientBase, sourceId: string): Promise<number[]> {
  const result = await client.query<{ ref: string }>(
    `SELECT o.source_ref AS ref FROM outcomes o JOIN invocations i ON i.id = o.invocation_id
     WHERE o.status = 'pending' AND o.source_ref IS NOT NULL AND i.writer_id = $1`,
    [sourceId],
  );
  return result.rows.map((r) => Number(r.ref));
}

/**
 * Marks interrupted, as the source's recovery did, outcomes the centre still shows pending
 * (`[source id, failure detail]`). Only a pending row changes: re-running is harmless, and a
 * completion shipped meanwhile (by its chain link) is never overwritten.
 */
export async function shipInterrupted(client: pg.ClientBase, sourceId: string, marks: [number, string | null][]): Promise<number> {
  if (marks.length === 0) return 0;
  const result = await client.query(
    `UPDATE outcomes o SET status = 'interrupted', failure_detail = u.detail
     FROM unnest($2::bigint[], $3::text[]) AS u(ref, detail), invocations i
     WHERE o.source_ref = u.ref AND o.status = 'pending' AND i.id = o.invocation_id AND i.writer_id = $1`,
    [sourceId, marks.map((m) => m[0]), marks.map((m) => storedValue(m[1]))],
  );
  return result.rowCount ?? 0;
}

/**
 * Ships one batch in one transaction: locks the source's head, reads the local records after it
 * (`read`), writes them and moves the head. Returns null when nothing was left to ship.
 */
export async function shipBatch(
  client: pg.ClientBase,
  sourceId: string,
  read: (afterSeq: number) => LocalBatch | Promise<LocalBatch>,
): Promise<{ counts: ShipCounts; head: ShippedHead } | null> {
  // Statements that need no reply in between go in one round trip (a simple query of several statements): each round
  // trip is time the backend waits for ship's event loop, which is busy reading the next batch (docs/ship.md, "Round trips").
  const source = client.escapeLiteral(sourceId);
  try {
    const head = (
      (await client.query(`BEGIN; SELECT head_seq, head_hash FROM writers WHERE id = ${source} FOR UPDATE`)) as unknown as [
        pg.QueryResult,
        pg.QueryResult<{ head_seq: number; head_hash: string }>,
      ]
    )[1].rows[0];
    if (!head) throw new LedgerError('ledger_ship_unregistered', `source ${sourceId} is not registered at the centre`);
    const batch = await read(head.head_seq);
    const span = batch.span;
    if (!span) {
      await client.query('COMMIT');
      return null;
    }
    // The next link must follow the shipped head; after a gap (the source pruned links never shipped) it cannot be checked here: verify judges the gap against the source's prune checkpoints.
    if (span.firstSeq === head.head_seq + 1 && span.prevHash !== head.head_hash)
      throw new LedgerError(
        'ledger_ship_diverged',
        `this ledger's link ${span.firstSeq} does not follow link ${head.head_seq} that the centre holds for source ${sourceId}: the ledger was replaced or restored from an older copy; ship it under a new source id (delete its ship_source row)`,
      );
    const counts = await writeBatch(client, sourceId, batch);
    const seq = Math.trunc(span.lastSeq);
    await client.query(
      `UPDATE writers SET head_seq = ${seq}, head_hash = ${client.escapeLiteral(span.lastHash)} WHERE id = ${source};
       UPDATE ship_sources SET last_shipped_at = ${Date.now()} WHERE id = ${source}; COMMIT`,
    );
    return { counts, head: { seq: span.lastSeq, hash: span.lastHash } };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

async function writeBatch(client: pg.ClientBase, sourceId: string, batch: LocalBatch): Promise<ShipCounts> {
  const counts = zeroCounts();
  counts.links = batch.links;
  const hookSetIds = await mapHookSets(client, sourceId, batch.hookSets, counts);

  // Central invocation ids by position in batch.invocations.
  let centralIds: string[] = [];
  const ways = await loadWays(client);
  const invocations = batch.invocations;
  if (invocations.length > 0) {
    // Each line after its central hook set id (and, the direct way, its central id).
    const hookSetOf = (k: number) => String(hookSetIds.get(invocations[k]![1]) ?? '\\N') + '\t';
    if (ways.direct) {
      // Central ids first (the outcomes name them), from the identity's own sequence: unique whatever else inserts meanwhile.
      // The session summaries of the whole batch in one statement instead of a row trigger per invocation (migration 0006), before
      // the outcomes, whose own trigger counts failures into them; the setting goes in the round trip that reserves the ids.
      const reserve = RESERVE_INVOCATION_IDS.replace('$1', String(invocations.length));
      const reserved = (await client.query(
        ways.batchSummaries ? `SELECT set_config('hookledger.summaries', 'batch', true); ${reserve}` : reserve,
      )) as unknown as pg.QueryResult<{ id: string }> | [pg.QueryResult, pg.QueryResult<{ id: string }>];
      centralIds = (Array.isArray(reserved) ? reserved[1] : reserved).rows.map((r) => r.id);
      let text = '';
      for (let k = 0; k < invocations.length; k++) text += centralIds[k]! + '\t' + hookSetOf(k) + invocations[k]![2];
      counts.invocations = await copyIn(client, 'invocations', INVOCATION_COPY_COLUMNS, text);
      if (ways.batchSummaries) await client.query('SELECT hl_session_summaries_add($1::bigint[])', [centralIds]);
    } else {
      let text = '';
      for (let k = 0; k < invocations.length; k++) text += hookSetOf(k) + invocations[k]![2];
      const inserted = await staged(client, 'invocations', INVOCATION_COPY_COLUMNS.slice(1), text, 'RETURNING id, source_ref');
      const byLocal = new Map(inserted.rows.map((r) => [Number(r.source_ref), String(r.id)]));
      centralIds = invocations.map((row) => byLocal.get(row[0])!);
      counts.invocations = inserted.rowCount ?? 0;
    }
  }
  // Each outcome line after its invocation's central id.
  let outcomes = '';
  for (let k = 0; k < invocations.length; k++) {
    const lines = invocations[k]![3];
    if (lines === null) continue;
    const prefix = centralIds[k]! + '\t';
    outcomes += prefix + lines.replaceAll('\n', '\n' + prefix) + '\n';
  }
  if (outcomes.length > 0)
    counts.outcomes = ways.direct
      ? await copyIn(client, 'outcomes', OUTCOME_COPY_COLUMNS, outcomes)
      : ((await staged(client, 'outcomes', OUTCOME_COPY_COLUMNS, outcomes)).rowCount ?? 0);
  // After the inserts: a completion may follow its invocation within the batch.
  if (batch.completions.length > 0) {
    const rows = batch.completions.map((row) => [...row, row[0]]);
    counts.backgroundCompletions = (
      await client.query(COMPLETE_OUTCOMES, [
        ...arraysOf(rows, [...OUTCOME_COLUMNS, 'source_ref'], COMPLETION_COLUMNS, outcomeValue),
        sourceId,
      ])
    ).rowCount!;
  }
  if (batch.checkpoints.length > 0) {
    const rows = batch.checkpoints.map((row) => [...row, row[0]]);
    counts.checkpoints = (
      await client.query(INSERT_CHECKPOINTS, [
        ...arraysOf(rows, [...CHECKPOINT_COLUMNS, 'source_ref'], CHECKPOINT_INSERT_COLUMNS),
        sourceId,
      ])
    ).rowCount!;
  }
  if (ways.direct) await copyIn(client, 'chain', LINK_COPY_COLUMNS, batch.linksText);
  else await staged(client, 'chain', LINK_COPY_COLUMNS, batch.linksText);
  return counts;
}

/** How this connection's role can load rows (probed once per connection). */
interface LoadWays {
  /**
   * COPY straight into the tables, with central invocation ids taken from their sequence: not where
   * row-level security applies to the role (PostgreSQL refuses COPY FROM there; docs/ship.md,
   * Security) or where it may not use the sequence (an identity default needs no such right).
   */
  direct: boolean;
  /** The role may keep session_summaries itself; a least-privilege role may not (its triggers run as the owner). */
  batchSummaries: boolean;
}

const probed = new WeakMap<pg.ClientBase, LoadWays>();

async function loadWays(client: pg.ClientBase): Promise<LoadWays> {
  let ways = probed.get(client);
  if (!ways) {
    const row = (
      await client.query<{ direct: boolean; summaries: boolean }>(
        `SELECT NOT (row_security_active('invocations') OR row_security_active('outcomes') OR row_security_active('chain'))
             AND has_sequence_privilege(pg_get_serial_sequence('invocations', 'id'), 'USAGE') AS direct,
           has_table_privilege('session_summaries', 'INSERT') AND has_table_privilege('session_summaries', 'UPDATE') AS summaries`,
      )
    ).rows[0]!;
    ways = { direct: row.direct, batchSummaries: row.direct && row.summaries };
    probed.set(client, ways);
  }
  return ways;
}

/**
 * The indirect way: COPY text into a temporary table of those columns, then `INSERT … SELECT`
 * into `table` (policies checked and identity ids given row by row, as for any insert).
 */
async function staged(client: pg.ClientBase, table: string, columns: string[], text: string, returning = ''): Promise<pg.QueryResult> {
  const staging = `hl_ship_${table}`;
  const list = columns.join(', ');
  await client.query(`CREATE TEMP TABLE IF NOT EXISTS ${staging} ON COMMIT DELETE ROWS AS SELECT ${list} FROM ${table} WITH NO DATA`);
  await copyIn(client, staging, columns, text);
  const inserted = await client.query(`INSERT INTO ${table} (${list}) SELECT ${list} FROM ${staging} ${returning}`);
  await client.query(`TRUNCATE ${staging}`);
  return inserted;
}

/**
 * Stores the ledger's hook sets and maps the source's ids to them, each statement committing on its own, before the
 * batches: a hook set is shared by every source (one row per fingerprint), and a batch that inserted one held that
 * row until its commit, so every other source whose batch needed the same hook set waited for that whole batch
 * (8 sources at once spent 8% of their backends' time so; docs/ship.md "8 sources at once"). Nothing here needs
 * the batch's atomicity: a hook set stored or mapped without its invocations is what the next batch would store,
 * and a batch maps whatever is still missing (a hook set created after this ran). Returns how many were new.
 */
export async function shipHookSets(client: pg.ClientBase, sourceId: string, hookSets: Row[]): Promise<number> {
  const counts = zeroCounts();
  await mapHookSets(client, sourceId, hookSets, counts);
  return counts.hookSets;
}

/** Central hook set ids of the batch's local ones: stored once per fingerprint, each source's local id mapped. */
async function mapHookSets(client: pg.ClientBase, sourceId: string, hookSets: Row[], counts: ShipCounts): Promise<Map<number, number>> {
  const ids = new Map<number, number>();
  if (hookSets.length === 0) return ids;
  const localIds = hookSets.map((row) => row[0] as number);
  const known = () =>
    client.query<{ local_id: number; hook_set_id: number }>(
      'SELECT local_id, hook_set_id FROM ship_hook_sets WHERE source_id = $1 AND local_id = ANY($2::bigint[])',
      [sourceId, localIds],
    );
  for (const r of (await known()).rows) ids.set(r.local_id, r.hook_set_id);
  const missing = hookSets.filter((row) => !ids.has(row[0] as number));
  if (missing.length === 0) return ids;
  counts.hookSets = (await client.query(INSERT_HOOK_SETS, arraysOf(missing, HOOK_SET_COLUMNS, HOOK_SET_INSERT_COLUMNS))).rowCount!;
  const fingerprint = HOOK_SET_COLUMNS.indexOf('fingerprint');
  // Outside a batch, a second ship of this source may map the same ids at the same moment: then its mapping stands.
  const mapped = await client.query<{ local_id: number; hook_set_id: number }>(
    `INSERT INTO ship_hook_sets (source_id, local_id, hook_set_id)
     SELECT $1, m.local_id, h.id FROM unnest($2::bigint[], $3::text[]) AS m(local_id, fingerprint) JOIN hook_sets h ON h.fingerprint = m.fingerprint
     ON CONFLICT (source_id, local_id) DO NOTHING RETURNING local_id, hook_set_id`,
    [sourceId, missing.map((row) => row[0]), missing.map((row) => row[fingerprint])],
  );
  for (const r of mapped.rows) ids.set(r.local_id, r.hook_set_id);
  if (mapped.rows.length < missing.length) for (const r of (await known()).rows) ids.set(r.local_id, r.hook_set_id);
  return ids;
}

/** Two int4 advisory lock keys: 'hksp' and the source id's hash. */
const LOCK_CLASS = 0x686b7370;

/**
 * Takes the source's session lock if free: one ship per source at a time. Correctness does not
 * rest on it (each batch locks the source's head row); it keeps two shippers from interleaving
 * batches for nothing. The server drops it with the session when a ship dies.
 */
export async function tryLockSource(client: pg.ClientBase, sourceId: string): Promise<boolean> {
  return (await client.query<{ got: boolean }>('SELECT pg_try_advisory_lock($1::int, hashtext($2)) AS got', [LOCK_CLASS, sourceId]))
    .rows[0]!.got;
}
