import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { deny } from '../../src/domain/results.js';
import { listHolds, placeHold, releaseHold } from '../../src/ledger/holds.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { pruneLedger } from '../../src/ledger/prune.js';
import { parseTimeBound } from '../../src/domain/time.js';
import { OptionError } from '../../src/domain/errors.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createRunner } from '../../src/runner/runner.js';
import { runCli } from '../cli-helpers.js';
import { tempDir, tempLedger } from '../helpers.js';

const writerScript = join(import.meta.dirname, '../fixtures/scripts/chain-writer.ts');
const DAY = 86_400_000;

afterEach(() => vi.useRealTimers());

const hookSet = defineHooks({
  name: 'retention',
  hooks: [
    {
      id: 'guard',
      point: 'pre_tool_use',
      capability: 'guardrail',
      run: (inv) => ((inv.toolInput as { command: string }).command === 'rm' ? deny('no') : undefined),
    },
    { id: 'bg', point: 'pre_tool_use', mode: 'background', run: () => undefined },
  ],
});

/** Runs `count` invocations of a session as if it were `daysAgo` days ago. */
async function history(ledger: SqliteLedger, sessionId: string, daysAgo: number, count: number): Promise<void> {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() - daysAgo * DAY);
  const runner = createRunner({ hookSet, ledger });
  for (let i = 0; i < count; i++)
    await runner.run({ point: 'pre_tool_use', sessionId, toolName: 'Bash', toolInput: { command: i % 3 === 0 ? 'rm' : 'ls' } });
  await runner.close();
  vi.useRealTimers();
}

function sessions(ledger: SqliteLedger): Record<string, number> {
  const rows = ledger.sqlite
    .prepare('SELECT session_id AS s, count(*) AS n FROM invocations GROUP BY session_id ORDER BY session_id')
    .all() as { s: string; n: number }[];
  return Object.fromEntries(rows.map((r) => [r.s, r.n]));
}

describe('prune', () => {
  it('deletes old invocations in batches, keeps held sessions and recent ones, and verify still passes', async () => {
    const { ledger } = tempLedger();
    await history(ledger, 's-old-1', 400, 7);
    await history(ledger, 's-held', 390, 4);
    await history(ledger, 's-old-2', 200, 5);
    await history(ledger, 's-recent', 10, 3);
    placeHold(ledger, 's-held', 'case 42');
    const outcomesBefore = ledger.sqlite.prepare('SELECT count(*) FROM outcomes').pluck().get() as number;

    const dry = await pruneLedger(ledger, { before: parseTimeBound('180d'), dryRun: true });
    expect(dry).toMatchObject({ dryRun: true, invocations: 12, outcomes: 24, held: [{ sessionId: 's-held', invocations: 4 }] });
    expect(sessions(ledger)).toEqual({ 's-held': 4, 's-old-1': 7, 's-old-2': 5, 's-recent': 3 });

    const report = await pruneLedger(ledger, { before: parseTimeBound('180d'), batchSize: 5 });
    expect(report).toMatchObject({
      invocations: 12,
      outcomes: 24,
      batches: 3,
      held: [{ sessionId: 's-held', invocations: 4 }],
      inProgress: 0,
    });
    // 12 invocation links + 7 background links (the 5 denied invocations' background hooks were skipped).
    expect(report.links).toBe(12 + 7);
    expect(report.checkpoints).toHaveLength(3);
    expect(sessions(ledger)).toEqual({ 's-held': 4, 's-recent': 3 });
    expect(ledger.sqlite.prepare('SELECT count(*) FROM outcomes').pluck().get()).toBe(outcomesBefore - 24);

    const verified = verifyLedger(ledger);
    expect(verified.problems).toEqual([]);
    expect(verified).toMatchObject({ ok: true, prunedLinks: 19, records: { invocations: 7, checkpoints: 3 } });

    // Releasing the hold lets the next prune take the session; the chain still verifies.
    releaseHold(ledger, 's-held');
    expect((await pruneLedger(ledger, { before: parseTimeBound('180d') })).invocations).toBe(4);
    expect(sessions(ledger)).toEqual({ 's-recent': 3 });
    expect(verifyLedger(ledger)).toMatchObject({ ok: true, prunedLinks: 19 + 4 + 2 });
  });

  it('after a prune, removals outside hookledger are still caught, including of a checkpoint', async () => {
    const { ledger, path } = tempLedger();
    await history(ledger, 's-old', 300, 4);
    await history(ledger, 's-new', 1, 3);
    await pruneLedger(ledger, { before: parseTimeBound('180d') });
    expect(verifyLedger(ledger).ok).toBe(true);
    const db = new Database(path);
    const newest = db.prepare('SELECT max(id) FROM invocations').pluck().get() as number;
    db.prepare('DELETE FROM invocations WHERE id = ?').run(newest);
    db.prepare('DELETE FROM prune_checkpoints').run();
    db.close();
    const problems = verifyLedger(ledger).problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'removed', table: 'prune_checkpoints' }),
        expect.objectContaining({ kind: 'removed', table: 'invocations', id: newest }),
      ]),
    );
    // Without its checkpoint, the pruned links are a gap nobody accounts for.
    expect(problems[0]).toMatchObject({ kind: 'removed', table: 'chain' });
  });

  it('a prune running while writer processes write loses nothing of theirs', async () => {
    const dir = tempDir();
    const path = join(dir, 'busy.db');
    const ledger = SqliteLedger.open({ path });
    await history(ledger, 's-old', 365, 300);
    const writers = 3;
    const each = 30;
    let ready = 0;
    let go: () => void = () => {};
    const allReady = new Promise<void>((resolve) => (go = resolve));
    const children = Array.from(
      { length: writers },
      (_, i) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', writerScript, path, String(each), `w${i}`], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let err = '';
          child.stdout.on('data', (c: Buffer) => {
            if (c.toString().includes('ready') && ++ready === writers) go();
          });
          child.stderr.on('data', (c: Buffer) => (err += c.toString()));
          child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${i} exited ${code}: ${err}`))));
        }),
    );
    await Promise.race([allReady, Promise.all(children)]);
    // Writers and the prune start together; small batches with pauses keep the prune going while they write.
    writeFileSync(`${path}.go`, '');
    const pruned = await pruneLedger(ledger, { before: parseTimeBound('180d'), batchSize: 10, pauseMs: 10 });
    await Promise.all(children).catch((error: unknown) => {
      ledger.close();
      throw error;
    });
    expect(pruned.invocations).toBe(300);
    expect(sessions(ledger)).toEqual(Object.fromEntries(Array.from({ length: writers }, (_, i) => [`s-w${i}`, each])));
    const report = verifyLedger(ledger);
    expect(report.problems).toEqual([]);
    expect(report.records.invocations).toBe(writers * each);
    ledger.close();
  }, 60_000);

  it('refuses a cutoff in the future and a bad batch size with errors that name the option, not a CLI flag', async () => {
    const { ledger } = tempLedger();
    const future = pruneLedger(ledger, { before: Date.now() + DAY });
    await expect(future).rejects.toBeInstanceOf(OptionError);
    await expect(future).rejects.toMatchObject({ option: 'before', message: expect.stringMatching(/^before: .* is in the future/) });
    await expect(pruneLedger(ledger, { before: 0, batchSize: 0 })).rejects.toMatchObject({
      option: 'batchSize',
      message: 'batchSize: must be an integer from 1 to 100000, got 0',
    });
  });
});

describe('legal holds', () => {
  it('place, update, list and release', () => {
    const { ledger } = tempLedger();
    placeHold(ledger, 's-1', 'case 1', 'alice');
    placeHold(ledger, 's-1', 'case 1, extended', 'bob');
    expect(listHolds(ledger)).toEqual([
      expect.objectContaining({ sessionId: 's-1', reason: 'case 1, extended', heldBy: 'bob', invocations: 0 }),
    ]);
    releaseHold(ledger, 's-1');
    expect(listHolds(ledger)).toEqual([]);
    expect(() => releaseHold(ledger, 's-1')).toThrow(/not under legal hold/);
    expect(() => placeHold(ledger, 's-2', ' ')).toThrow(new OptionError('reason', 'must say why the session is held (e.g. a case number)'));
    expect(() => placeHold(ledger, ' ', 'x')).toThrow('sessionId: must not be blank');
  });
});

describe('hookledger prune / hold', () => {
  it('holds a session, prunes around it, and verify passes', async () => {
    const { ledger, path } = tempLedger();
    await history(ledger, 's-a', 300, 3);
    await history(ledger, 's-b', 300, 2);
    ledger.close();
    expect((await runCli(['hold', 's-b', '--reason', 'litigation 7', '--db', path])).code).toBe(0);
    const list = await runCli(['hold', '--list', '--db', path, '--json']);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ sessionId: 's-b', invocations: 2, reason: 'litigation 7' })]);
    const pruned = await runCli(['prune', '--before', '90d', '--db', path, '--json']);
    expect(pruned.code).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ invocations: 3, held: [{ sessionId: 's-b', invocations: 2 }] });
    const text = await runCli(['prune', '--before', '90d', '--db', path, '--dry-run']);
    expect(text.stdout).toContain('would delete 0 invocations');
    expect(text.stdout).toContain('s-b');
    expect((await runCli(['verify', '--db', path])).code).toBe(0);
    expect((await runCli(['hold', '--release', 's-b', '--db', path])).code).toBe(0);
    const usage = await runCli(['prune', '--db', path]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--before AGE\|DATE is required/);
  }, 120_000);
});
