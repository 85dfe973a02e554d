import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from '../postgres/support.js';
import { writeLedger } from './support.js';

/** The summaries as kept (migrations 0002, 0006) and as computed from the records (0002's own backfill query). */
async function summaries(name: string) {
  const kept = await adminSql(
    `SELECT session_id, first_seen::text, last_seen::text, last_id::text, invocations::int, denials::int, asks::int, modified::int, failures::int, timeouts::int
     FROM session_summaries WHERE stale = 0 ORDER BY session_id`,
    name,
  );
  const computed = await adminSql(
    `SELECT i.session_id, min(i.started_at)::text AS first_seen, max(i.started_at)::text AS last_seen, max(i.id)::text AS last_id,
       count(*)::int AS invocations, count(*) FILTER (WHERE i.decision = 'deny')::int AS denials,
       count(*) FILTER (WHERE i.decision = 'ask')::int AS asks, count(*) FILTER (WHERE i.modified_input_json IS NOT NULL)::int AS modified,
       coalesce(sum(f.failures), 0)::int AS failures, coalesce(sum(f.timeouts), 0)::int AS timeouts
     FROM invocations i LEFT JOIN (SELECT invocation_id, count(*) FILTER (WHERE status = 'failed') AS failures,
       count(*) FILTER (WHERE status = 'timed_out') AS timeouts FROM outcomes GROUP BY invocation_id) f ON f.invocation_id = i.id
     WHERE i.session_id IS NOT NULL GROUP BY i.session_id ORDER BY i.session_id`,
    name,
  );
  return { kept, computed };
}

describe('ship keeps the central session summaries', { timeout: 180_000 }, () => {
  it('batches add their summaries in one statement (0006): equal to the summaries computed from the records, two sources sharing sessions', async () => {
    const dir = tempDir();
    const [a, b] = [join(dir, 'a.db'), join(dir, 'b.db')];
    // The same tag: both ledgers write the sessions s-x-0 … s-x-2, so the second source's batches add to existing summaries.
    await Promise.all([writeLedger(a, 130, 'x'), writeLedger(b, 110, 'x')]);
    const { url, name } = await freshDatabase();
    const ship = (db: string) =>
      runCli(['ship', '--db', db, '--json', '--batch', '40'], { timeoutMs: 120_000, env: { HOOKLEDGER_SHIP_TO: url } });
    const runs = await Promise.all([ship(a), ship(b)]);
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const { kept, computed } = await summaries(name);
    expect(computed.map((s) => s.session_id)).toEqual(['s-x-0', 's-x-1', 's-x-2']);
    expect(computed.reduce((n, s) => n + (s.invocations as number), 0)).toBe(240);
    expect(computed.some((s) => (s.denials as number) > 0)).toBe(true);
    expect(kept).toEqual(computed);
  });
});
