import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, tsxLoader } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

const root = join(import.meta.dirname, '../..');

/** Runs `scripts/generate-ledger.ts` in a child process, as `npm run generate:ledger -- …` does. */
function generate(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsxLoader, join(root, 'scripts/generate-ledger.ts'), ...args], {
      cwd: root,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

// Issue 11 §1: the generator rewrote finished_at after each chain link was computed, so verify
// (rightly) reported every record as changed. Every writer must produce a ledger that verifies.
describe('a ledger written by the generator with --chain', () => {
  it('verifies through the CLI, and verify still names a plain-SQL edit of it', { timeout: 120_000 }, async () => {
    const db = join(tempDir(), 'generated.db');
    const generated = await generate(['--out', db, '--invocations', '300', '--sessions', '4', '--days', '3', '--chain']);
    expect(generated.stderr).toBe('');
    expect(generated.code).toBe(0);

    const sqlite = new Database(db);
    const counts = sqlite
      .prepare(
        `SELECT (SELECT count(*) FROM invocations) AS invocations, (SELECT count(*) FROM chain) AS links,
           (SELECT count(*) FROM invocations WHERE finished_at <> started_at + duration_us / 1000) AS offClock`,
      )
      .get() as { invocations: number; links: number; offClock: number };
    sqlite.close();
    expect(counts.invocations).toBe(300);
    expect(counts.links).toBe(300);
    // The synthetic history's finish times still follow its own clock (they are now written by finish()).
    expect(counts.offClock).toBe(0);

    const intact = await runCli(['verify', '--db', db, '--json'], { timeoutMs: 60_000 });
    expect(intact.stderr).toBe('');
    expect(intact.code).toBe(0);
    const report = JSON.parse(intact.stdout) as { ok: boolean; links: number; problemCount: number };
    expect(report).toMatchObject({ ok: true, links: 300, problemCount: 0 });

    // The same rewrite the generator used to do, on one row: verify names exactly that record.
    const edit = new Database(db);
    edit.prepare('UPDATE invocations SET finished_at = finished_at + 1 WHERE id = 7').run();
    edit.close();
    const broken = await runCli(['verify', '--db', db], { timeoutMs: 60_000 });
    expect(broken.code).toBe(5);
    expect(broken.stderr.trim().split('\n')).toEqual([expect.stringContaining('invocation #7 differs from what was committed')]);
  });
});
