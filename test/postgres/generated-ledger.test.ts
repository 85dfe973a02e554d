import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explainPostgres } from '../../src/ledger/postgres/queries/explain.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { verifyPostgres } from '../../src/ledger/postgres/verify.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { generateLedger } from '../../scripts/generate-ledger.js';
import { runNode, tsxLoader } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from './support.js';

const root = join(import.meta.dirname, '../..');
const HISTORY = ['--invocations', '400', '--sessions', '5', '--days', '3', '--seed', '11'];

/** Runs `scripts/generate-ledger.ts` in a child process, as `npm run generate:ledger -- …` does. */
function generate(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runNode(['--import', tsxLoader, join(root, 'scripts/generate-ledger.ts'), ...args], { cwd: root });
}

/**
 * What does not depend on when, where or by which loader the history was written: not times, pid
 * or host, nor the hook set fingerprint (it covers the hooks' compiled source, which vitest's
 * transform and tsx's differ in).
 */
function comparable(value: unknown): unknown {
  // `origin` is the central ledger's own (explain: who wrote the record); SQLite has none.
  return JSON.parse(JSON.stringify(value), (key, v: unknown) => (/At$|^pid$|^host$|^fingerprint$|^origin$/.test(key) ? undefined : v));
}

const stores: PostgresStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

describe('generate:ledger --db postgres://…', () => {
  it('writes the same history as on SQLite, chained so that verify passes, and reports read it', { timeout: 180_000 }, async () => {
    const { name, url } = await freshDatabase('gen');
    const generated = await generate(['--db', url, ...HISTORY]);
    expect(generated.stderr).toBe('');
    expect(generated.code).toBe(0);
    expect(generated.stdout).toContain('done: 400 invocations');

    const store = await PostgresStore.open({ url });
    stores.push(store);
    const report = await verifyPostgres(store.connection.pool, url);
    expect(report.problems).toEqual([]);
    expect(report).toMatchObject({ ok: true, links: 400, uncommitted: 0, writers: [{ writer: 'generator', links: 400 }] });

    // The same seed on SQLite: the same invocations, decisions and outcomes (only clocks differ).
    const path = join(tempDir(), 'same.db');
    generateLedger({ out: path, invocations: 400, sessions: 5, days: 3, seed: 11, chain: true });
    const sqlite = SqliteLedger.open({ path });
    try {
      const summary = `SELECT point, decision, decisive_hook_id, reason_code, count(*) AS n FROM invocations
        GROUP BY point, decision, decisive_hook_id, reason_code ORDER BY point, decision, decisive_hook_id, reason_code`;
      const onPostgres = await adminSql(summary, name);
      expect(onPostgres.map((r) => ({ ...r, n: Number(r.n) }))).toEqual(sqlite.sqlite.prepare(summary).all());
      const outcomes = `SELECT hook_id, status, decision, count(*) AS n FROM outcomes GROUP BY hook_id, status, decision ORDER BY hook_id, status, decision`;
      expect((await adminSql(outcomes, name)).map((r) => ({ ...r, n: Number(r.n) }))).toEqual(sqlite.sqlite.prepare(outcomes).all());

      // Reports read the generated rows as they read live ones: explain a denial and a tool call on both engines.
      const denied = sqlite.sqlite.prepare(`SELECT id, tool_use_id FROM invocations WHERE decision = 'deny' ORDER BY id LIMIT 1`).get() as {
        id: number;
        tool_use_id: string | null;
      };
      for (const ref of [denied.id, 1, 200]) {
        expect(comparable(await explainPostgres(store.connection.pool, url, ref))).toEqual(comparable(explain(sqlite, ref)));
      }
      if (denied.tool_use_id)
        expect(comparable(await explainPostgres(store.connection.pool, url, denied.tool_use_id))).toEqual(
          comparable(explain(sqlite, denied.tool_use_id)),
        );
    } finally {
      await sqlite.close();
    }

    // The generated ledger accepts live writes after it: the identity columns continue past the loaded ids.
    const next = (await adminSql<{ id: string }>(`SELECT nextval(pg_get_serial_sequence('invocations', 'id')) AS id`, name))[0]!;
    expect(Number(next.id)).toBe(401);
  });

  it('refuses a database that already holds invocations, in one line', { timeout: 180_000 }, async () => {
    const { url } = await freshDatabase('gen');
    expect((await generate(['--db', url, '--invocations', '20', '--sessions', '2', '--days', '1'])).code).toBe(0);
    const again = await generate(['--db', url, '--invocations', '20', '--sessions', '2', '--days', '1']);
    expect(again.code).toBe(1);
    expect(again.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/already holds 20 invocations: generate into an empty database$/),
    ]);
    expect(again.stderr).not.toMatch(new URL(url).password);
  });
});
