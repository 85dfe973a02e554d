import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, PostgresServer } from '../../scripts/postgres-server.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { runCli, startCli } from '../cli-helpers.js';
import { sleep, tempDir } from '../helpers.js';
import { verifyCentre, writeLedger } from './support.js';

describe('ship when the centre fails', { timeout: 300_000 }, () => {
  it('a PostgreSQL restart mid-batch: ship says so in one line, waits, and finishes; nothing duplicated or skipped', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 600, 'a');
    // A server of its own: the shared one is never stopped.
    const server = await PostgresServer.start();
    try {
      const url = await server.createDatabase('centre');
      const run = startCli(['ship', '--db', db, '--batch', '10', '--json', '--retry-for', '120'], { env: { HOOKLEDGER_SHIP_TO: url } });
      const shippedSoFar = async () =>
        Number((await server.sql(`SELECT coalesce(max(head_seq), 0)::int AS n FROM writers`, 'centre'))[0]!.rows[0]!.n);
      const deadline = Date.now() + 120_000;
      while ((await shippedSoFar().catch(() => 0)) < 50 && Date.now() < deadline) await sleep(20);
      const port = server.port;
      // Crash it (SIGKILL) mid-run, then start it again on the same port.
      await server.kill();
      await sleep(1500);
      await server.launch();
      expect(server.port).toBe(port);
      const { code } = await run.exited;
      expect(code, run.output.stderr).toBe(0);
      const lines = run.output.stderr.trim().split('\n');
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines)
        expect(line).toMatch(/^hookledger: ship: cannot reach postgres:\/\/postgres@127\.0\.0\.1:\d+\/centre \(.+\); retrying in \d/);
      expect(run.output.stderr).not.toContain(server.password);
      const report = JSON.parse(run.output.stdout);
      expect(report.retries).toBe(lines.length);

      const ledger = SqliteLedger.open({ path: db });
      const localLinks = ledger.sqlite.prepare('SELECT count(*) FROM chain').pluck().get() as number;
      ledger.close();
      const [counts] = (
        await server.sql(
          `SELECT (SELECT count(*)::int FROM chain) AS links, (SELECT count(*)::int FROM invocations) AS invocations,
             (SELECT count(DISTINCT source_ref)::int FROM invocations) AS distinct_invocations`,
          'centre',
        )
      )[0]!.rows;
      expect(counts).toEqual({ links: localLinks, invocations: 600, distinct_invocations: 600 });
      expect((await verifyCentre(url)).problems).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it('the centre down: retries with backoff in one line each, gives up in one line, never shows the password; local decisions go on', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 20, 'a');
    const port = await freePort();
    const password = 'pw-must-not-show-7f3a';
    const centre = `postgres://shipper:${password}@127.0.0.1:${port}/centre`;
    // On the command line the password would show in the process list: refused, in one line without it.
    const refused = await runCli(['ship', '--to', centre, '--db', db]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(
      `hookledger: ship: --to: the URL must not carry the password (it would show in the process list): give it with PGPASSWORD or ~/.pgpass, or put the whole URL in HOOKLEDGER_SHIP_TO (postgres://shipper@127.0.0.1:${port}/centre)\n`,
    );
    const run = startCli(['ship', '--db', db, '--retry-for', '4'], { env: { HOOKLEDGER_SHIP_TO: centre } });
    await sleep(1500);
    const cmdline = (() => {
      try {
        return readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8');
      } catch {
        return '';
      }
    })();
    expect(cmdline).not.toContain(password);
    // Meanwhile the machine's decisions are recorded as ever.
    await writeLedger(db, 30, 'b');
    const { code } = await run.exited;
    expect(code).toBe(3);
    const lines = run.output.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines.slice(0, -1))
      expect(line).toMatch(
        new RegExp(
          `^hookledger: ship: cannot reach postgres://shipper@127\\.0\\.0\\.1:${port}/centre \\(connection refused.*\\); retrying in \\d`,
        ),
      );
    expect(lines.at(-1)).toMatch(
      new RegExp(
        `^hookledger: cannot ship to postgres://shipper@127\\.0\\.0\\.1:${port}/centre: connection refused.*; gave up after \\d+ s$`,
      ),
    );
    // Backoff: the waits grow.
    const waits = lines
      .slice(0, -1)
      .map((l) => /retrying in ([\d.]+) (ms|s)/.exec(l)!)
      .map((m) => Number(m[1]) * (m[2] === 's' ? 1000 : 1));
    expect(waits[1]!).toBeGreaterThan(waits[0]!);
    expect(run.output.stderr + run.output.stdout).not.toContain(password);
    const ledger = SqliteLedger.open({ path: db });
    expect(ledger.sqlite.prepare(`SELECT count(*) FROM invocations WHERE status = 'completed'`).pluck().get()).toBe(50);
    ledger.close();
    expect((await runCli(['verify', '--db', db])).code).toBe(0);
  });
});
