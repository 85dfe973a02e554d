import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runNode, tsxLoader } from '../cli-helpers.js';

const root = join(import.meta.dirname, '../..');

/** Runs one of the reliability scripts (small settings) and returns its exit code and output. */
function script(name: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runNode(['--import', tsxLoader, join(root, 'scripts', name), ...args], { cwd: root });
}

// The full runs (200 kills per mode, 8 x 2,000 writers) are `npm run crash` and `npm run load:writers`.
describe('reliability scripts, small', () => {
  it('crash: SIGKILLed children lose no reported decision, nothing stays running, integrity ok', async () => {
    const r = await script('crash.ts', ['--kills', '4', '--sync', 'normal', '--max-delay-ms', '150', '--seed', '3']);
    expect(r.stdout, r.stderr).toContain('PASS');
    expect(r.code).toBe(0);
    const row = r.stdout.split('\n').find((l) => l.startsWith('NORMAL'))!;
    // kills, reported, in ledger, completed, interrupted, running, incomplete, lost, integrity
    const cells = row.trim().split(/\s{2,}/);
    expect(cells[1]).toMatch(/^4 \(/);
    expect(Number(cells[2])).toBeGreaterThan(0);
    expect(cells.slice(6, 10)).toEqual(['0', '0', '0', 'ok']);
  });

  it('concurrent writers: 2 processes x 100 invocations, all present and complete, no SQLITE_BUSY', async () => {
    const r = await script('concurrent-writers.ts', ['--writers', '2', '--count', '100']);
    expect(r.stdout, r.stderr).toContain('PASS: all 200 invocations present and complete, no SQLITE_BUSY surfaced, integrity ok');
    expect(r.code).toBe(0);
  });
});
