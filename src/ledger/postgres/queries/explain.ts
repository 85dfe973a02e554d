import type pg from 'pg';
import { NotFoundError } from '../../../domain/errors.js';
import { explanationFrom, type Explanation, type ExplanationOrigin } from '../../queries/explain.js';
import { OUTCOME_ORDER, type InvocationRow, type OutcomeRow } from '../../rows.js';

/** An outcome row with `decisive` as the 0/1 the shared row mapping reads (PostgreSQL stores a boolean). */
const OUTCOMES = `SELECT *, decisive::int AS decisive FROM outcomes WHERE invocation_id = $1 ORDER BY ${OUTCOME_ORDER}`;

/**
 * `explain` on PostgreSQL: the same lookups as on SQLite (ledger/queries/explain.ts), the same
 * explanation built from the rows.
 */
export async function explainPostgres(pool: pg.Pool, location: string, ref: number | string): Promise<Explanation> {
  const row = await findInvocation(pool, ref);
  if (!row) throw new NotFoundError(`no invocation with id or tool_use_id "${ref}" in ${location}`);
  const [hookSet, outcomes, related] = await Promise.all([
    pool.query<Explanation['hookSet']>({
      name: 'hl_explain_hook_set',
      text: 'SELECT id, name, version, fingerprint, strategy FROM hook_sets WHERE id = $1',
      values: [row.hook_set_id],
    }),
    pool.query<OutcomeRow>({ name: 'hl_explain_outcomes', text: OUTCOMES, values: [row.id] }),
    row.tool_use_id
      ? pool.query<Explanation['related'][number]>({
          name: 'hl_explain_related',
          text: 'SELECT id, point, decision FROM invocations WHERE tool_use_id = $1 AND id != $2 ORDER BY id',
          values: [row.tool_use_id, row.id],
        })
      : null,
  ]);
  return { ...explanationFrom(row, hookSet.rows[0]!, outcomes.rows, related?.rows ?? []), origin: originOf(row) };
}

/** A central invocation row: the SQLite columns plus who wrote it (postgres/schema.ts). */
type CentralInvocationRow = InvocationRow & { writer_id: string | null; source_ref: number | null };

/** Shipped rows keep their source's id (`source_ref`) and have the source id as writer (docs/ship.md). */
function originOf(row: CentralInvocationRow): ExplanationOrigin {
  return row.source_ref !== null && row.writer_id !== null
    ? { kind: 'shipped', source: row.writer_id, host: row.host, sourceRef: Number(row.source_ref) }
    : { kind: 'direct', writer: row.writer_id, host: row.host };
}

async function findInvocation(pool: pg.Pool, ref: number | string): Promise<CentralInvocationRow | undefined> {
  const byId = async (id: number) =>
    (await pool.query<CentralInvocationRow>({ name: 'hl_explain_by_id', text: 'SELECT * FROM invocations WHERE id = $1', values: [id] }))
      .rows[0];
  if (typeof ref === 'number') return byId(ref);
  if (/^\d{1,15}$/.test(ref)) {
    const row = await byId(Number(ref));
    if (row) return row;
  }
  return (
    await pool.query<CentralInvocationRow>({
      name: 'hl_explain_by_tool_use',
      text: `SELECT * FROM invocations WHERE tool_use_id = $1 ORDER BY point = 'pre_tool_use' DESC, id DESC LIMIT 1`,
      values: [ref],
    })
  ).rows[0];
}
