import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { runCli } from '../cli-helpers.js';
import { recordScenario, writeScenario } from './ops-scenario.js';
import { freshDatabase } from './support.js';

/**
 * Parity through the real CLI: one varied scenario (ops-scenario.ts) recorded with the same
 * times into a SQLite file and a fresh PostgreSQL database, then `hooks`, `export` (JSON Lines
 * and CSV), `replay`, `replay list` and `replay show` run as child processes against each with
 * `--db`. Outputs must be identical, byte for byte for export. Normalised, because they must
 * differ: in replay output, times and durations (`startedAt`, `finishedAt`, `durationMs`,
 * `durationUs`): each replay runs the hooks again at its own moment, so the run's times and the
 * replayed hooks' measured durations are new; and nothing else.
 */

const index = join(import.meta.dirname, '../../src/index.js');
const DAY = 86_400_000;
let dir: string;
let db: { sqlite: string; postgres: string };
let store: PostgresStore | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookledger-parity-ops-'));
  const scratch = SqliteLedger.open({ path: ':memory:' });
  const events = await recordScenario(scratch);
  await scratch.close();
  const days = [0, 1, 3, 10, 40];
  const sqlitePath = join(dir, 'ledger.db');
  const sqlite = SqliteLedger.open({ path: sqlitePath });
  await writeScenario(sqlite, events, days);
  await sqlite.close();
  const { url } = await freshDatabase();
  store = await PostgresStore.open({ url, writerId: 'parity-ops' });
  await writeScenario(store, events, days);
  await store.close();
  store = undefined;
  db = { sqlite: sqlitePath, postgres: url };
  // The replayed hook set, as a user would write it.
  writeFileSync(
    join(dir, 'tightened.ts'),
    `import { defineHooks } from '${index}';
export default defineHooks({ name: 'ops-parity', version: '2', hooks: [
  { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', priority: 10,
    run: (inv) => /rm -rf|git push/.test(JSON.stringify(inv.toolInput)) ? { decision: 'deny', reasonCode: 'policy_violation', message: '=no "way"' } : undefined },
  { id: 'no-etc', point: 'pre_tool_use', match: 'Read', capability: 'guardrail', priority: 20,
    run: (inv) => (JSON.stringify(inv.toolInput).includes('/etc/') ? { decision: 'deny', message: '-etc is off limits' } : undefined) },
] });
`,
  );
}, 120_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the CLI against both ledgers; both must succeed. */
async function both(args: string[]): Promise<{ sqlite: string; postgres: string }> {
  const [a, b] = await Promise.all([
    runCli([...args, '--db', db.sqlite], { timeoutMs: 60_000 }),
    runCli([...args, '--db', db.postgres], { timeoutMs: 60_000 }),
  ]);
  expect(a.stderr, `sqlite: ${args.join(' ')}`).toBe('');
  expect(b.stderr, `postgres: ${args.join(' ')}`).toBe('');
  expect([a.code, b.code]).toEqual([0, 0]);
  return { sqlite: a.stdout, postgres: b.stdout };
}

describe('parity through the CLI: hooks, export, replay on SQLite and PostgreSQL', () => {
  it('hooks --json: the same report for a fixed window, one hook, and the default window', async () => {
    const iso = (at: number) => new Date(at).toISOString();
    const now = Date.now();
    const until = iso(now + 60_000);
    for (const extra of [
      ['--since', iso(now - 90 * DAY), '--until', until],
      ['--hook', 'no-rm', '--since', iso(now - 45 * DAY), '--until', until],
      ['--since', iso(now - 2 * DAY), '--until', iso(now - DAY / 2)],
      [],
    ]) {
      const out = await both(['hooks', '--json', ...extra]);
      const [a, b] = [JSON.parse(out.sqlite), JSON.parse(out.postgres)];
      if (extra.length === 0) {
        // Default window: each process takes its own "now"; compare the hooks.
        expect(b.hooks).toEqual(a.hooks);
      } else expect(b).toEqual(a);
      expect(a.hooks.length).toBeGreaterThan(0);
    }
  }, 180_000);

  it('export --format jsonl and csv: the same bytes, with and without filters', async () => {
    for (const extra of [[], ['--session', 'p1'], ['--decision', 'deny'], ['--agent', 'claude-code'], ['--since', '5d', '--until', '1d']]) {
      for (const format of ['jsonl', 'csv']) {
        const out = await both(['export', '--format', format, ...extra]);
        expect(out.postgres, `${format} ${extra.join(' ')}`).toBe(out.sqlite);
      }
    }
    const all = await both(['export', '--format', 'csv']);
    // Hostile text reached the CSV guarded: a formula-looking message gets its leading quote.
    expect(all.sqlite).toContain(`"'=HYPERLINK(""http://evil"",""x""), ""quoted""`);
    expect(all.sqlite.split('\r\n').length).toBe(5 * 9 + 2);
  }, 180_000);

  it('replay, replay list and replay show --json: the same runs and changes', async () => {
    const config = join(dir, 'tightened.ts');
    const replayed = await both(['replay', '--config', config, '--json']);
    const stable = (text: string) =>
      JSON.parse(text, (key, value: unknown) => (['startedAt', 'finishedAt', 'durationMs', 'durationUs'].includes(key) ? '<time>' : value));
    const [a, b] = [stable(replayed.sqlite), stable(replayed.postgres)];
    expect(b).toEqual(a);
    expect(a.run.totals).toMatchObject({ replayed: 45 });
    expect(a.changedTotal).toBeGreaterThan(0);

    const limited = await both(['replay', '--config', config, '--json', '--limit', '7', '--session', 'p1']);
    expect(stable(limited.postgres)).toEqual(stable(limited.sqlite));

    const listed = await both(['replay', 'list', '--json']);
    expect(stable(listed.postgres)).toEqual(stable(listed.sqlite));
    expect(stable(listed.sqlite)).toHaveLength(2);
    const shown = await both(['replay', 'show', '1', '--json']);
    expect(stable(shown.postgres)).toEqual(stable(shown.sqlite));
    const text = await both(['replay', 'show', '1']);
    const plain = (t: string) => t.replace(/\d{4}-\d\d-\d\d[T ][\d:.]+Z?/g, '<time>').replace(/took \S+/g, 'took <duration>');
    expect(plain(text.postgres)).toBe(plain(text.sqlite));
    expect(text.sqlite).toContain('newly denied');
  }, 240_000);
});
