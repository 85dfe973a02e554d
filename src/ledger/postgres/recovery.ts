import { hostname } from 'node:os';
import type pg from 'pg';
import { isProcessAlive } from '../sqlite-errors.js';

// Writers whose lease ran out and that left work unfinished (only those need a transaction).
const EXPIRED_WITH_WORK = {
  name: 'hl_expired_writers',
  text: `SELECT w.id FROM writers w WHERE w.lease_until < $1
    AND (EXISTS (SELECT 1 FROM invocations i WHERE i.writer_id = w.id AND i.status = 'running')
      OR EXISTS (SELECT 1 FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE o.status = 'pending' AND i.writer_id = w.id))`,
};
const LOCAL_PIDS = {
  name: 'hl_local_pids',
  text: `SELECT DISTINCT pid FROM invocations WHERE status = 'running' AND host = $1
    UNION SELECT DISTINCT i.pid FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE o.status = 'pending' AND i.host = $1`,
};

/**
 * Marks work no process will finish as `interrupted`: `running` invocations and `pending`
 * background outcomes of writers whose lease ran out (any host), and of dead processes on this
 * host (their pid can be checked here, so a dead one is known at once, not after the lease).
 * One transaction; a writer still alive that commits later overwrites `interrupted` with its
 * decision (ledger/postgres/write.ts), so nothing acknowledged is ever lost. Runs at open, and at
 * every lease renewal of a live writer with `localPids: false` (the lease alone decides there).
 */
export async function recoverPostgres(
  pool: pg.Pool,
  now = Date.now(),
  host = hostname(),
  options: { localPids?: boolean } = {},
): Promise<{ invocations: number; outcomes: number }> {
  const expired = (await pool.query<{ id: string }>({ ...EXPIRED_WITH_WORK, values: [now] })).rows.map((r) => r.id);
  const local =
    options.localPids === false ? [] : (await pool.query<{ pid: number }>({ ...LOCAL_PIDS, values: [host] })).rows.map((r) => r.pid);
  const dead = local.filter((pid) => !isProcessAlive(pid));
  if (expired.length === 0 && dead.length === 0) return { invocations: 0, outcomes: 0 };
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const invocations = await client.query(
      `UPDATE invocations SET status = 'interrupted', message = coalesce(message, CASE WHEN writer_id = ANY($1)
         THEN 'writer ' || writer_id || ' stopped renewing its lease before the decision was committed'
         ELSE 'process ' || pid || ' ended before the decision was committed' END)
       WHERE status = 'running' AND (writer_id = ANY($1) OR (host = $2 AND pid = ANY($3)))`,
      [expired, host, dead],
    );
    const outcomes = await client.query(
      `UPDATE outcomes o SET status = 'interrupted', failure_detail = 'process ended before this background hook finished'
       FROM invocations i
       WHERE o.status = 'pending' AND i.id = o.invocation_id AND (i.writer_id = ANY($1) OR (i.host = $2 AND i.pid = ANY($3)))`,
      [expired, host, dead],
    );
    await client.query('COMMIT');
    return { invocations: invocations.rowCount ?? 0, outcomes: outcomes.rowCount ?? 0 };
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
