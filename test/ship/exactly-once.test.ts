import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { runCli, startCli } from '../cli-helpers.js';
import { sleep, tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from '../postgres/support.js';
import { startWriter, verifyCentre, writeLedger } from './support.js';

/** Local links and invocations (what the centre must end up holding), and central rows of the source, with duplicates counted apart. */
async function compare(db: string, name: string) {
  const ledger = SqliteLedger.open({ path: db });
  const source = ledger.sqlite.prepare('SELECT source_id FROM ship_source').pluck().get() as string;
  const local = {
    links: ledger.sqlite.prepare('SELECT count(*) FROM chain').pluck().get() as number,
    invocations: ledger.sqlite.prepare(`SELECT count(*) FROM chain WHERE kind = 'invocation'`).pluck().get() as number,
    outcomes: ledger.sqlite.prepare('SELECT count(*) FROM outcomes').pluck().get() as number,
  };
  ledger.close();
  const [central] = await adminSql<{ links: number; invocations: number; distinct_invocations: number; outcomes: number; head: number }>(
    `SELECT (SELECT count(*)::int FROM chain WHERE writer_id = $1) AS links,
       (SELECT count(*)::int FROM invocations WHERE writer_id = $1) AS invocations,
       (SELECT count(DISTINCT source_ref)::int FROM invocations WHERE writer_id = $1) AS distinct_invocations,
       (SELECT count(*)::int FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE i.writer_id = $1) AS outcomes,
       (SELECT head_seq::int FROM writers WHERE id = $1) AS head`,
    name,
    [source],
  );
  return { source, local, central: central! };
}

describe('ship exactly once', { timeout: 300_000 }, () => {
  it('repeated SIGKILLs of ship during a live load: nothing duplicated, nothing skipped, both ends verify', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    const { url, name } = await freshDatabase();
    await writeLedger(db, 50, 'warm');
    const writer = startWriter(db, 1500, 'live');
    let writing = true;
    void writer.done.finally(() => (writing = false));
    let kills = 0;
    let completed = 0;
    // Kill at varied moments: during start-up, connect, mid-batch, between batches; on a fast
    // machine ships finish sooner, so keep starting them until at least 3 were killed.
    for (let i = 0; writing || i < 6 || kills < 3; i++) {
      const run = startCli(['ship', '--db', db, '--batch', '25', '--json'], { env: { HOOKLEDGER_SHIP_TO: url } });
      const exited = Promise.race([run.exited, sleep(250 + ((i * 397) % 2500)).then(() => null)]);
      const result = await exited;
      if (result === null) {
        run.child.kill('SIGKILL');
        await run.exited;
        kills++;
      } else {
        expect(result.code, run.output.stderr).toBe(0);
        completed++;
      }
      if (i > 200) throw new Error('the writer did not finish');
    }
    await writer.done;
    expect(kills).toBeGreaterThanOrEqual(3);
    const last = await runCli(['ship', '--db', db, '--json'], { timeoutMs: 120_000, env: { HOOKLEDGER_SHIP_TO: url } });
    expect(last.code, last.stderr).toBe(0);

    const { local, central } = await compare(db, name);
    expect(local.invocations).toBe(1550);
    expect(central).toEqual({
      links: local.links,
      invocations: local.invocations,
      distinct_invocations: local.invocations,
      outcomes: local.outcomes,
      head: local.links,
    });
    expect((await verifyCentre(url)).problems).toEqual([]);
    expect((await runCli(['verify', '--db', db])).code).toBe(0);
    expect(completed + kills).toBeGreaterThan(0);
  });

  it('two ship processes for one source at once: one waits for the other, the records arrive once', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 400, 'a');
    const { url, name } = await freshDatabase();
    // The source id is created once, before both start (as the first ship of a ledger does).
    const ledger = SqliteLedger.open({ path: db });
    ledger.sqlite.prepare(`INSERT INTO ship_source (id, source_id, created_at) VALUES (1, 'src-two-shippers', 0)`).run();
    ledger.close();
    const [a, b] = await Promise.all([
      runCli(['ship', '--db', db, '--json', '--batch', '20'], { timeoutMs: 120_000, env: { HOOKLEDGER_SHIP_TO: url } }),
      runCli(['ship', '--db', db, '--json', '--batch', '20'], { timeoutMs: 120_000, env: { HOOKLEDGER_SHIP_TO: url } }),
    ]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    const shipped = [JSON.parse(a.stdout), JSON.parse(b.stdout)].map((r) => r.shipped.invocations as number);
    expect(shipped[0]! + shipped[1]!).toBe(400);
    const { local, central } = await compare(db, name);
    expect(central).toEqual({
      links: local.links,
      invocations: 400,
      distinct_invocations: 400,
      outcomes: local.outcomes,
      head: local.links,
    });
    expect((await verifyCentre(url)).problems).toEqual([]);
  });
});
