import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prunePostgres } from '../../src/ledger/postgres/prune.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from '../postgres/support.js';
import { verifyCentre, writeLedger } from './support.js';

const ship = (url: string, db: string, ...more: string[]) =>
  runCli(['ship', '--db', db, '--json', ...more], { timeoutMs: 60_000, env: { HOOKLEDGER_SHIP_TO: url } });

async function centralCounts(name: string, source: string) {
  const [row] = await adminSql<{ invocations: number; outcomes: number; links: number; pending: number }>(
    `SELECT (SELECT count(*)::int FROM invocations WHERE writer_id = $1) AS invocations,
       (SELECT count(*)::int FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE i.writer_id = $1) AS outcomes,
       (SELECT count(*)::int FROM chain WHERE writer_id = $1) AS links,
       (SELECT count(*)::int FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE i.writer_id = $1 AND o.status = 'pending') AS pending`,
    name,
    [source],
  );
  return row!;
}

/** What the local ledger holds: the counts a complete ship must report. */
function localCounts(db: string) {
  const ledger = SqliteLedger.open({ path: db });
  try {
    const count = (sql: string) => ledger.sqlite.prepare(sql).pluck().get() as number;
    return {
      invocations: count(`SELECT count(*) FROM chain WHERE kind = 'invocation'`),
      outcomes: count(`SELECT count(*) FROM outcomes`),
      backgroundCompletions: count(`SELECT count(*) FROM chain WHERE kind = 'background'`),
      links: count(`SELECT count(*) FROM chain`),
    };
  } finally {
    ledger.close();
  }
}

describe('hookledger ship', { timeout: 180_000 }, () => {
  it('ships every committed record once with the source id and host; a second run ships nothing; both ends verify', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 120, 'a');
    const { url, name } = await freshDatabase();

    const first = await ship(url, db);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const report = JSON.parse(first.stdout);
    expect(report.source).toMatch(/^src-[0-9a-f-]{36}$/);
    const local = localCounts(db);
    expect(local.invocations).toBe(120);
    expect(report.shipped).toMatchObject({ ...local, hookSets: 1 });
    expect(report.head.seq).toBe(local.links);

    const again = JSON.parse((await ship(url, db)).stdout);
    expect(again.source).toBe(report.source);
    expect(again.shipped).toMatchObject({ invocations: 0, outcomes: 0, links: 0 });

    expect(await centralCounts(name, report.source)).toEqual({
      invocations: 120,
      outcomes: local.outcomes,
      links: local.links,
      pending: 0,
    });
    const [meta] = await adminSql<{ host: string }>(`SELECT host FROM ship_sources WHERE id = $1`, name, [report.source]);
    expect(meta!.host).toBe(report.host);
    // Rows keep their source ids and host, verbatim.
    const ledger = SqliteLedger.open({ path: db });
    const localRow = ledger.sqlite.prepare('SELECT * FROM invocations WHERE id = 7').get() as Record<string, unknown>;
    ledger.close();
    const [centralRow] = await adminSql(`SELECT * FROM invocations WHERE writer_id = $1 AND source_ref = 7`, name, [report.source]);
    for (const column of ['invocation_json', 'raw_json', 'decision', 'message', 'started_at', 'host', 'pid', 'session_id'])
      expect(String(centralRow![column]), column).toEqual(String(localRow[column])); // bigint comes back as text

    const verified = await verifyCentre(url);
    expect(verified.problems).toEqual([]);
    expect(verified.writers).toEqual([{ writer: report.source, links: local.links, head: report.head }]);
    expect((await runCli(['verify', '--db', db])).code).toBe(0);

    // --source on the local ledger: its own id selects it whole, any other id nothing.
    const mine = await runCli(['denials', '--db', db, '--source', report.source, '--json']);
    expect(JSON.parse(mine.stdout).rows.length).toBe(24);
    const other = await runCli(['denials', '--db', db, '--source', 'src-elsewhere', '--json']);
    expect(JSON.parse(other.stdout).rows).toEqual([]);
  });

  it('prunes and holds: a record pruned locally after it was shipped stays central; checkpoints and holds ship; a gap pruned before shipping verifies', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 100, 'a');
    expect((await runCli(['hold', 's-a-0', '--reason', 'case 7', '--db', db])).code).toBe(0);
    const { url, name } = await freshDatabase();
    const first = JSON.parse((await ship(url, db)).stdout);
    expect(first.shipped).toMatchObject({ invocations: 100, holds: 1 });

    // Everything so far pruned locally (the held session kept), then more records; then ship again.
    const cutoff = new Date(Date.now() + 1000).toISOString();
    await new Promise((r) => setTimeout(r, 1100));
    const pruned = await runCli(['prune', '--before', cutoff, '--db', db, '--json']);
    expect(pruned.code, pruned.stderr).toBe(0);
    // Prune removed the newest links too: its checkpoint follows the last of them, never reusing a seq ship has seen.
    const ledger = SqliteLedger.open({ path: db });
    expect(ledger.sqlite.prepare('SELECT max(seq) FROM chain').pluck().get()).toBeGreaterThan(first.head.seq);
    ledger.close();
    await writeLedger(db, 30, 'b');
    const secondRun = await ship(url, db);
    expect(secondRun.stderr).toBe('');
    const second = JSON.parse(secondRun.stdout);
    expect(second.shipped.invocations).toBe(30);
    expect(second.shipped.checkpoints).toBeGreaterThan(0);
    expect((await centralCounts(name, first.source)).invocations).toBe(130);
    expect(await adminSql(`SELECT session_id, reason FROM legal_holds`, name)).toEqual([{ session_id: 's-a-0', reason: 'case 7' }]);
    expect((await verifyCentre(url)).problems).toEqual([]);
    expect((await runCli(['verify', '--db', db])).code).toBe(0);

    // A ledger pruned before it was ever shipped: the centre gets what remains, and the gap verifies against the checkpoint.
    const other = join(dir, 'ci.db');
    await writeLedger(other, 40, 'c');
    await new Promise((r) => setTimeout(r, 1100));
    expect((await runCli(['prune', '--before', new Date(Date.now() - 100).toISOString(), '--db', other])).code).toBe(0);
    await writeLedger(other, 10, 'd');
    const lateRun = await ship(url, other);
    expect(lateRun.stderr).toBe('');
    const late = JSON.parse(lateRun.stdout);
    expect(late.source).not.toBe(first.source);
    expect(late.shipped.invocations).toBe(10);
    const verified = await verifyCentre(url);
    expect(verified.problems).toEqual([]);
    expect(verified.writers.map((w) => w.writer).sort()).toEqual([first.source, late.source].sort());
  });

  it('verify names the source of a record edited centrally, a missing range and a reordered link', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 60, 'a');
    const { url, name } = await freshDatabase();
    const { source, host } = JSON.parse((await ship(url, db)).stdout);
    const named = `source ${source} (host ${host})`;

    await adminSql(`UPDATE invocations SET decision = 'allow' WHERE writer_id = $1 AND source_ref = 11`, name, [source]);
    let report = await verifyCentre(url);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({ kind: 'changed', table: 'invocations', id: 11, writer: source });
    expect(report.problems[0]!.detail).toContain(named);
    // The same through the CLI: exit 5, one line naming the source and the record.
    const cli = await runCli(['verify', '--db', url]);
    expect(cli.code).toBe(5);
    expect(cli.stderr).toContain(`${named}: invocation #11`);
    await adminSql(`UPDATE invocations SET decision = 'deny' WHERE writer_id = $1 AND source_ref = 11`, name, [source]);
    expect((await verifyCentre(url)).ok).toBe(true);

    await adminSql(`DELETE FROM chain WHERE writer_id = $1 AND seq BETWEEN 20 AND 24`, name, [source]);
    report = await verifyCentre(url);
    expect(report.problems[0]).toMatchObject({ kind: 'removed', table: 'chain', seq: 20, writer: source });
    expect(report.problems[0]!.detail).toBe(
      `${named}: chain links 20..24 are missing and no prune checkpoint accounts for them (records deleted with their links)`,
    );

    const { name: name2, url: url2 } = await freshDatabase();
    const db2 = join(dir, 'other.db');
    await writeLedger(db2, 20, 'b');
    const second = JSON.parse((await ship(url2, db2)).stdout);
    // Two links swapped: each sits where the other was.
    await adminSql(`UPDATE chain SET seq = CASE seq WHEN 5 THEN -6 ELSE -5 END WHERE writer_id = $1 AND seq IN (5, 6)`, name2, [
      second.source,
    ]);
    await adminSql(`UPDATE chain SET seq = -seq WHERE writer_id = $1 AND seq < 0`, name2, [second.source]);
    report = await verifyCentre(url2);
    expect(report.ok).toBe(false);
    expect(report.problems.every((p) => p.writer === second.source && p.detail.startsWith(`source ${second.source}`))).toBe(true);
    expect(report.problems.some((p) => p.seq === 5 || p.seq === 6)).toBe(true);
  });

  it('no foreign key holds outcomes to their invocations at the centre: verify names an orphan outcome with its source', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 30, 'a');
    const { url, name } = await freshDatabase();
    const { source, host } = JSON.parse((await ship(url, db)).stdout);
    expect((await verifyCentre(url)).ok).toBe(true);
    const [victim] = await adminSql<{ id: number; outcomes: number }>(
      `SELECT i.id::int, (SELECT count(*)::int FROM outcomes o WHERE o.invocation_id = i.id) AS outcomes
       FROM invocations i WHERE i.writer_id = $1 AND i.source_ref = 7`,
      name,
      [source],
    );
    expect(victim!.outcomes).toBeGreaterThan(0);
    // Deleted over SQL: nothing cascades, its outcomes stay behind as orphans.
    await adminSql(`DELETE FROM invocations WHERE id = $1`, name, [victim!.id]);
    // And an outcome inserted over SQL for an invocation that never existed.
    await adminSql(
      `INSERT INTO outcomes (invocation_id, hook_id, point, priority, registration_index, mode, capability, runtime, status, decisive, timeout_ms)
       VALUES (999999, 'forged', 'pre_tool_use', 0, 0, 'sync', 'guardrail', 'inline', 'completed', false, 1000)`,
      name,
    );
    const report = await verifyCentre(url);
    expect(report.ok).toBe(false);
    const orphans = report.problems.filter((p) => p.table === 'outcomes' && p.kind === 'inserted');
    expect(orphans).toHaveLength(victim!.outcomes + 1);
    const named = `source ${source} (host ${host})`;
    for (const orphan of orphans.slice(0, -1)) {
      expect(orphan.writer).toBe(source);
      expect(orphan.detail).toMatch(
        new RegExp(
          `^${named.replace(/[()]/g, '\\$&')}: outcome #\\d+ \\(central #\\d+\\) has no invocation: invocation #7 \\(link \\d+\\) is gone$`,
        ),
      );
    }
    expect(orphans.at(-1)).toMatchObject({ writer: null, seq: null });
    expect(orphans.at(-1)!.detail).toMatch(/^outcome #\d+ has no invocation: invocation #999999 is gone and no writer's chain covers it$/);
    // The source's own walk names the gone invocation too; the CLI exits 5.
    expect(report.problems).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'removed', table: 'invocations', id: 7, writer: source })]),
    );
    expect((await runCli(['verify', '--db', url])).code).toBe(5);
  });

  it('central retention: prune on PostgreSQL removes shipped records with their source links, keeps held sessions, and every source still verifies', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 100, 'a');
    const { url, name } = await freshDatabase();
    const first = JSON.parse((await ship(url, db)).stdout);
    await adminSql(`INSERT INTO legal_holds (session_id, reason, held_by, created_at) VALUES ('s-a-1', 'audit', 'test', 0)`, name);
    await new Promise((r) => setTimeout(r, 50));
    const store = await PostgresStore.open({ url, writerId: 'central-admin' });
    try {
      const pruned = await prunePostgres(store, { before: Date.now() });
      expect(pruned.invocations).toBe(50);
    } finally {
      await store.close();
    }
    expect((await verifyCentre(url)).problems.map((p) => p.detail)).toEqual([]);
    // The source goes on shipping after the centre pruned its records.
    await writeLedger(db, 10, 'b');
    const second = JSON.parse((await ship(url, db)).stdout);
    expect(second.shipped.invocations).toBe(10);
    expect((await centralCounts(name, first.source)).invocations).toBe(60);
    const verified = await verifyCentre(url);
    expect(verified.problems).toEqual([]);
    expect(verified.prunedLinks).toBeGreaterThan(0);
  });

  it("central retention that takes a source's newest links (nothing held) still verifies, before and after the source ships again", async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 30, 'a');
    const { url, name } = await freshDatabase();
    const first = JSON.parse((await ship(url, db)).stdout);
    await new Promise((r) => setTimeout(r, 50));
    const store = await PostgresStore.open({ url, writerId: 'central-admin' });
    try {
      expect((await prunePostgres(store, { before: Date.now() })).invocations).toBe(30);
    } finally {
      await store.close();
    }
    const [left] = await adminSql<{ links: number }>(`SELECT count(*)::int AS links FROM chain WHERE writer_id = $1`, name, [first.source]);
    expect(left?.links).toBe(0);
    expect((await verifyCentre(url)).problems.map((p) => p.detail)).toEqual([]);
    // Deleting links from the end without a prune is still named.
    await writeLedger(db, 5, 'b');
    expect(JSON.parse((await ship(url, db)).stdout).shipped.invocations).toBe(5);
    expect((await verifyCentre(url)).problems.map((p) => p.detail)).toEqual([]);
    await adminSql(`DELETE FROM chain WHERE writer_id = $1 AND seq = (SELECT max(seq) FROM chain WHERE writer_id = $1)`, name, [
      first.source,
    ]);
    expect((await verifyCentre(url)).problems.map((p) => p.detail).join('\n')).toMatch(/links were removed from its end|missing/);
  });
});
