import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { ShipperLock, shipperHolder, shipperRunning } from '../../src/ledger/ship-lock.js';
import { autoShipFiles } from '../../src/ship/auto-files.js';
import { retakeForMark } from '../../src/ship/auto-shipper.js';
import { startCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

/**
 * The shipper lock against a look (an event's, `ship --status`): a real SQLite shared lock held
 * by another process, as `shipperRunning` takes it, only longer, so that the moment is certain.
 */

const root = join(import.meta.dirname, '../..');

/** Another process looking at `lockFile` and holding its shared lock for `ms`; resolves once it holds it. */
async function look(lockFile: string, ms: number): Promise<{ done: Promise<void> }> {
  const script = `const Database = require('better-sqlite3');
    const db = new Database(process.argv[1], { fileMustExist: true });
    db.exec('BEGIN'); db.prepare('SELECT count(*) FROM sqlite_master').get();
    process.stdout.write('holding\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, Number(process.argv[2]));`;
  const child = spawn(process.execPath, ['-e', script, lockFile, String(ms)], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  onTestFinished(() => void child.kill('SIGKILL'));
  const done = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('holding') && resolve());
    child.on('exit', (code) => reject(new Error(`the look ended (${code}) before holding the lock`)));
  });
  return { done };
}

describe('the shipper lock and a look at the same instant', { timeout: 60_000 }, () => {
  it('a background shipper taking the lock back for "ship again" waits a look out instead of leaving the mark to nobody', async () => {
    const db = join(tempDir(), 'ledger.db');
    await SqliteLedger.open({ path: db }).close();
    const files = autoShipFiles(db);
    expect(files.locks).toHaveLength(2); // by path and by identity
    ShipperLock.tryAcquire(files.locks, 0)!.release(); // the lock files exist, as after any shipper

    for (const lockFile of files.locks) {
      const first = await look(lockFile, 600);
      // What the shipper did before: one try. A look holding the file at that instant made it leave, and a look
      // that starts no shipper (ship --status, a monitor) left the mark to nobody.
      expect(ShipperLock.tryAcquire(files.locks, 0, 'ship --background')).toBeNull();
      await first.done;
      const second = await look(lockFile, 400);
      const started = Date.now();
      const lock = retakeForMark(files, 5000);
      expect(lock, lockFile).not.toBeNull();
      expect(Date.now() - started).toBeGreaterThan(100); // it waited for the look
      expect(shipperRunning(files.locks)).toBe(true);
      expect(shipperHolder(files.locks)).toMatchObject({ pid: process.pid, command: 'ship --background' });
      lock!.release();
      await second.done;
      expect(shipperRunning(files.locks)).toBe(false);
    }
  });

  it('a shipper that holds it keeps it: the take-back gives up after its wait, and a look sees the holder', async () => {
    const db = join(tempDir(), 'ledger.db');
    await SqliteLedger.open({ path: db }).close();
    const files = autoShipFiles(db);
    const holder = ShipperLock.tryAcquire(files.locks, 1000, 'ship --follow')!;
    try {
      expect(retakeForMark(files, 300)).toBeNull();
      expect(shipperHolder(files.locks)).toMatchObject({ pid: process.pid, command: 'ship --follow' });
    } finally {
      holder.release();
    }
    expect(shipperHolder(files.locks)).toBeNull();
  });
});

describe('a manual ship interrupted while it waits for another shipper', { timeout: 60_000 }, () => {
  it('says in one line that it shipped nothing and exits 130 on SIGINT, 143 on SIGTERM', async () => {
    const dir = tempDir();
    const db = join(dir, 'ledger.db');
    await SqliteLedger.open({ path: db }).close();
    const other = ShipperLock.tryAcquire(autoShipFiles(db).locks, 1_000, 'ship');
    expect(other).not.toBeNull();
    onTestFinished(() => other!.release());
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      // Nothing listens on port 1: the ship must stop before it ever connects.
      const cli = startCli(['ship', '--db', db, '--to', 'postgres://ship@127.0.0.1:1/centre']);
      onTestFinished(() => void cli.child.kill('SIGKILL'));
      const deadline = Date.now() + 30_000;
      while (!cli.output.stderr.includes('waiting for it') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(cli.output.stderr).toContain('waiting for it');
      cli.child.kill(signal);
      const exit = await cli.exited;
      expect(exit.code).toBe(code);
      const lines = cli.output.stderr.trim().split('\n');
      expect(lines.at(-1)).toBe(`hookledger: ship: stopped by ${signal} while waiting for the other shipper; nothing was shipped`);
      expect(cli.output.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
  });
});
