import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { BACKGROUND_AFTER_COMMITS, BACKSTOP_PAGES, checkpointerFor, RESTART_PAGES } from '../../src/ledger/checkpoint.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createRunner } from '../../src/runner/runner.js';
import { tsxLoader } from '../cli-helpers.js';
import { tempDir, waitFor } from '../helpers.js';

const hookSet = defineHooks({
  name: 'checkpoints',
  hooks: [
    { id: 'guard', point: 'pre_tool_use', capability: 'guardrail', run: () => ({ decision: 'allow' }) },
    { id: 'watch', point: 'pre_tool_use', run: () => ({ additionalContext: 'seen' }) },
  ],
});
const padding = 'x'.repeat(40_000);
const invocation = (n: number) => ({
  point: 'pre_tool_use' as const,
  sessionId: 's',
  toolName: 'Bash',
  toolInput: { command: `echo ${n}`, padding },
});
const walSize = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

describe('WAL checkpoints off the decision path', () => {
  it('a short-lived writer keeps SQLite’s automatic checkpoint; a long-lived one hands checkpoints to a worker', async () => {
    const path = join(tempDir(), 'ledger.db');
    const ledger = SqliteLedger.open({ path });
    const runner = createRunner({ hookSet, ledger });
    const checkpointer = checkpointerFor(ledger.sqlite, ledger.path);
    for (let n = 0; n < BACKGROUND_AFTER_COMMITS - 1; n++) await runner.run(invocation(n));
    expect(checkpointer.inBackground).toBe(false);
    expect(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
    await runner.run(invocation(BACKGROUND_AFTER_COMMITS));
    expect(checkpointer.inBackground).toBe(true);
    expect(ledger.sqlite.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_PAGES);
    await runner.run(invocation(BACKGROUND_AFTER_COMMITS + 1));
    await waitFor(() => checkpointer.backgroundCheckpoints > 0, 20_000);
    await runner.close();
    ledger.close();
    // The worker let go of its connection first, so this close was the last and removed the WAL.
    expect(existsSync(`${path}-wal`)).toBe(false);
    const reopened = SqliteLedger.open({ path, readonly: true });
    expect(reopened.sqlite.prepare(`SELECT count(*) FROM invocations WHERE status = 'completed'`).pluck().get()).toBe(
      BACKGROUND_AFTER_COMMITS + 1,
    );
    reopened.close();
  }, 60_000);

  it('the WAL stays bounded under sustained writes', async () => {
    const path = join(tempDir(), 'ledger.db');
    const ledger = SqliteLedger.open({ path });
    const runner = createRunner({ hookSet, ledger });
    const pageSize = ledger.sqlite.pragma('page_size', { simple: true }) as number;
    // Each invocation writes several pages (the 40 KB input is stored twice), so 4,000 of them
    // push the WAL through the backstop several times over.
    let maxWal = 0;
    let written = 0;
    for (let n = 0; n < 4_000; n++) {
      await runner.run(invocation(n));
      written += 1;
      if (n % 25 === 0) maxWal = Math.max(maxWal, walSize(path));
    }
    const pagesWritten =
      (ledger.sqlite.prepare('SELECT sum(length(input_json) + length(invocation_json)) FROM invocations').pluck().get() as number) /
      pageSize;
    expect(pagesWritten).toBeGreaterThan(BACKSTOP_PAGES * 2);
    // Bounded: at the backstop the deciding connection checkpoints itself, but that PASSIVE
    // checkpoint can be held back for a few commits by the worker's own short read, and the WAL
    // restarts only at the first commit after one completes. Seen up to ~1.2x the backstop on a
    // loaded 2-core machine; twice the backstop (each frame is a page and a 24-byte header) is the line.
    expect(maxWal).toBeLessThanOrEqual(2 * BACKSTOP_PAGES * (pageSize + 24) + 32);
    const checkpointer = checkpointerFor(ledger.sqlite, ledger.path);
    expect(checkpointer.backgroundCheckpoints).toBeGreaterThan(0);
    // The WAL was rewound after the worker's copies (the backstop on the deciding connection is only for a stalled worker).
    expect(checkpointer.restarts).toBeGreaterThan(0);
    await runner.close();
    ledger.close();
    expect(written).toBe(4_000);
  }, 180_000);

  it('a writer that yields to its event loop (a server between requests) finishes rewinds there, not in a decision', async () => {
    const path = join(tempDir(), 'ledger.db');
    const ledger = SqliteLedger.open({ path });
    const runner = createRunner({ hookSet, ledger });
    const checkpointer = checkpointerFor(ledger.sqlite, ledger.path);
    const deadline = Date.now() + 120_000;
    for (let n = 0; checkpointer.restarts < 2 && Date.now() < deadline; n++) {
      expect((await runner.run(invocation(n))).decision).toBe('allow');
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(checkpointer.restarts).toBeGreaterThanOrEqual(2);
    // The worker's message arrives while the loop waits for its next turn, and the rewind is finished there
    // (one may still fall inside a decision, when the worker raises its flag in the middle of one).
    expect(checkpointer.idleRewinds).toBeGreaterThanOrEqual(1);
    await runner.close();
    ledger.close();
  }, 180_000);

  it('a reader holding an old snapshot stops no decision: the worker backs off, and rewinds the WAL once it is gone', async () => {
    const path = join(tempDir(), 'ledger.db');
    const ledger = SqliteLedger.open({ path });
    const runner = createRunner({ hookSet, ledger });
    const checkpointer = checkpointerFor(ledger.sqlite, ledger.path);
    let n = 0;
    while (!checkpointer.inBackground) await runner.run(invocation(n++));
    // A report in another connection, reading one snapshot for as long as it likes.
    const reader = SqliteLedger.open({ path, readonly: true });
    reader.sqlite.exec('BEGIN');
    const seen = reader.sqlite.prepare('SELECT count(*) FROM invocations').pluck().get() as number;
    const restartsBefore = checkpointer.restarts;
    const pageSize = ledger.sqlite.pragma('page_size', { simple: true }) as number;
    // Well past the point where the worker wants to rewind (each invocation stores its 40 KB input twice).
    const target = n + Math.ceil((RESTART_PAGES * 1.5 * pageSize) / 80_000);
    while (n < target) {
      const report = await runner.run(invocation(n++));
      expect(report.decision).toBe('allow');
    }
    // The snapshot could not be copied over, so no rewind completed; the reader still sees its snapshot.
    expect(checkpointer.restarts).toBe(restartsBefore);
    expect(reader.sqlite.prepare('SELECT count(*) FROM invocations').pluck().get()).toBe(seen);
    reader.sqlite.exec('COMMIT');
    reader.close();
    // Once the reader is gone (after the worker's back-off, at most 8 rounds), the WAL is rewound again.
    const deadline = Date.now() + 60_000;
    while (checkpointer.restarts === restartsBefore && Date.now() < deadline) {
      await runner.run(invocation(n++));
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(checkpointer.restarts).toBeGreaterThan(restartsBefore);
    await runner.close();
    ledger.close();
  }, 180_000);

  it('a writer killed while the worker checkpoints loses no acknowledged decision', async () => {
    const dir = tempDir();
    const path = join(dir, 'ledger.db');
    const acknowledged: number[] = [];
    for (let round = 0; round < 3; round++) {
      const child = spawn(
        process.execPath,
        ['--import', tsxLoader, join(import.meta.dirname, '../fixtures/scripts/checkpoint-writer.ts'), path],
        {
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      let buffer = '';
      let checkpointed = false;
      let rewound = false;
      let idsAfter = 0;
      child.stdout.on('data', (c: Buffer) => {
        buffer += c.toString();
        const lines = buffer.split('\n');
        buffer = lines.pop()!;
        for (const line of lines) {
          if (line === 'checkpointed') checkpointed = true;
          else if (line === 'rewound') rewound = true;
          else if (/^\d+$/.test(line)) {
            acknowledged.push(Number(line));
            // The last round is killed after the WAL has been rewound (a FULL checkpoint, then commits from the WAL's start).
            if (checkpointed && (round < 2 || rewound)) idsAfter += 1;
          }
        }
      });
      const exited = new Promise((resolve) => child.once('close', resolve));
      // Killed some way into writing after the worker has checkpointed (a different point each round).
      await waitFor(() => idsAfter >= 50 + round * 37 || child.exitCode !== null, 120_000);
      child.kill('SIGKILL');
      await exited;
      expect(child.signalCode, stderr).toBe('SIGKILL');
    }
    const ledger = SqliteLedger.open({ path });
    try {
      const status = ledger.sqlite.prepare('SELECT status FROM invocations WHERE id = ?').pluck();
      const outcomes = ledger.sqlite.prepare(`SELECT count(*) FROM outcomes WHERE invocation_id = ? AND status = 'completed'`).pluck();
      const lost = acknowledged.filter((id) => status.get(id) !== 'completed' || outcomes.get(id) !== 2);
      expect(acknowledged.length).toBeGreaterThan(150);
      expect(lost).toEqual([]);
      expect(ledger.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(verifyLedger(ledger).ok).toBe(true);
    } finally {
      ledger.close();
    }
  }, 180_000);
});
