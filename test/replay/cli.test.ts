import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadHookSet } from '../../src/config/load.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { runCli, startCli } from '../cli-helpers.js';
import { sleep, tempDir, waitFor } from '../helpers.js';
import { bashCall, readCall, record } from './fixtures.js';

const index = join(import.meta.dirname, '../../src/index.js');

const hooks = (version: string, pattern: string, extra = '') => `import { defineHooks, deny } from '${index}';
export default defineHooks({ name: 'ci', version: '${version}', hooks: [
  { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail',
    run: (inv) => /${pattern}/.test(String((inv.toolInput as { command?: string }).command)) ? deny('no ${pattern}', 'safety_violation') : undefined },
  ${extra}
] });
`;

async function recordedLedger(dir: string, invocations = [bashCall('ls'), bashCall('rm -rf build'), bashCall('rm x'), readCall('/a')]) {
  writeFileSync(join(dir, 'old.ts'), hooks('1', 'rm -rf'));
  writeFileSync(join(dir, 'new.ts'), hooks('2', 'rm '));
  const db = join(dir, 'l.db');
  const ledger = SqliteLedger.open({ path: db });
  await record(ledger, await loadHookSet(join(dir, 'old.ts')), invocations);
  ledger.close();
  return db;
}

describe('hookledger replay (CLI)', () => {
  it('--fail-on-change exits 1 on a change and 0 without; show and list read the stored runs', async () => {
    const dir = tempDir();
    const db = await recordedLedger(dir);
    const same = await runCli(['replay', '--config', join(dir, 'old.ts'), '--db', db, '--fail-on-change']);
    expect(same.stderr).toBe('');
    expect(same.code).toBe(0);
    expect(same.stdout).toContain('No decision changed.');

    const changed = await runCli(['replay', '--config', join(dir, 'new.ts'), '--db', db, '--fail-on-change']);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(/newly denied\s+1/);
    expect(changed.stdout).toContain('#3  session s-1  Bash  {"command":"rm x"}');
    expect(changed.stdout).toContain('now  deny by no-rm [safety_violation]: no rm\n');
    for (const line of changed.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);

    const withoutFlag = await runCli(['replay', '--config', join(dir, 'new.ts'), '--db', db, '--json']);
    expect(withoutFlag.code).toBe(0);
    const json = JSON.parse(withoutFlag.stdout);
    expect(json.run).toMatchObject({ id: 3, status: 'completed', totals: { replayed: 4, newlyDenied: 1 } });
    expect(json.changes).toEqual([
      expect.objectContaining({ invocationId: 2, change: 'other_reason', old: expect.objectContaining({ message: 'no rm -rf' }) }),
      expect.objectContaining({ invocationId: 3, change: 'newly_denied', newDecisiveHookId: 'no-rm' }),
    ]);

    const shown = await runCli(['replay', 'show', '2', '--db', db, '--fail-on-change']);
    expect(shown.code).toBe(1);
    expect(shown.stdout).toContain('Replay run 2  ci@2');
    const list = await runCli(['replay', 'list', '--db', db, '--json']);
    expect(JSON.parse(list.stdout).map((r: { id: number }) => r.id)).toEqual([3, 2, 1]);
    const text = await runCli(['replay', 'list', '--db', db]);
    expect(text.stdout.split('\n')[1]).toMatch(/^3\s+completed/);
  });

  it('selects with the denials flags and --limit; a baseline is reported apart', async () => {
    const dir = tempDir();
    const db = await recordedLedger(dir);
    const run = await runCli([
      'replay',
      '--config',
      join(dir, 'new.ts'),
      '--baseline',
      join(dir, 'old.ts'),
      '--db',
      db,
      '--tool',
      'Bash',
      '--decision',
      'none',
      '--limit',
      '1',
      '--json',
    ]);
    expect(run.stderr).toBe('');
    const json = JSON.parse(run.stdout);
    expect(json.run.selection).toEqual({ filter: { toolName: 'Bash', decision: 'none' }, limit: 1 });
    expect(json.run.totals).toMatchObject({ selected: 1, replayed: 1, newlyDenied: 1, baselineMismatches: 0 });
    expect(json.run.baseline).toMatchObject({ name: 'ci', version: '1' });
  });

  it.each([
    [['replay', '--config', 'new.ts', '--decision', 'maybe'], /--decision: unknown decision "maybe"/],
    [['replay', '--config', 'new.ts', '--concurrency', '0'], /--concurrency: expected a positive whole number/],
    [['replay', 'show'], /replay show: give a replay run id/],
    [['replay', 'frob'], /unknown subcommand "frob"/],
  ])('bad usage %j: one line, exit 2', async (args, message) => {
    const dir = tempDir();
    writeFileSync(join(dir, 'new.ts'), hooks('2', 'rm '));
    const result = await runCli([...(args as string[]), '--db', join(dir, 'l.db')], { cwd: dir });
    expect(result.stderr).toMatch(message as RegExp);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.code).toBe(2);
  });

  it('show of a missing run exits 4', async () => {
    const dir = tempDir();
    const db = await recordedLedger(dir);
    const result = await runCli(['replay', 'show', '9', '--db', db]);
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/no replay run 9/);
  });

  it('Ctrl-C stops cleanly: exit 130, the run is incomplete and keeps its results so far', async () => {
    const dir = tempDir();
    const invocations = Array.from({ length: 400 }, (_, i) => bashCall(`echo ${i}`));
    const db = await recordedLedger(dir, invocations);
    writeFileSync(
      join(dir, 'slow.ts'),
      hooks('3', 'rm ', `{ id: 'slow', point: 'pre_tool_use', run: () => new Promise((r) => setTimeout(r, 10)) },`),
    );
    const { child, output, exited } = startCli(['replay', '--config', join(dir, 'slow.ts'), '--db', db, '--concurrency', '1']);
    child.stdin!.end();
    const reader = new Database(db, { readonly: true });
    try {
      await waitFor(
        () => (reader.prepare(`SELECT count(*) FROM replay_runs WHERE status = 'running'`).pluck().get() as number) > 0,
        15_000,
      );
      await sleep(500);
      child.kill('SIGINT');
      const { code } = await exited;
      expect(output.stderr).toMatch(/replay interrupted; run 1 keeps the \d+ results so far \(incomplete\)/);
      expect(code).toBe(130);
      const run = reader.prepare('SELECT status, totals_json FROM replay_runs WHERE id = 1').get() as {
        status: string;
        totals_json: string;
      };
      expect(run.status).toBe('incomplete');
      const totals = JSON.parse(run.totals_json);
      const stored = reader.prepare('SELECT count(*) FROM replay_results WHERE run_id = 1').pluck().get() as number;
      expect(stored).toBeGreaterThan(0);
      expect(stored).toBeLessThan(400);
      expect(totals).toMatchObject({ selected: 400, replayed: stored, unchanged: stored });
      expect(output.stdout).toContain('INCOMPLETE');
      // Stored results are a prefix in invocation order.
      const ids = reader.prepare('SELECT invocation_id FROM replay_results WHERE run_id = 1 ORDER BY id').pluck().all();
      expect(ids).toEqual(Array.from({ length: stored }, (_, i) => i + 1));
    } finally {
      reader.close();
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
