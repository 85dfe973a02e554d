import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { runCli, tsxLoader } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from '../postgres/support.js';
import { verifyCentre } from './support.js';

const writerScript = join(import.meta.dirname, '../fixtures/scripts/pending-background-writer.ts');

const ship = (url: string, db: string) => runCli(['ship', '--db', db, '--json'], { timeoutMs: 60_000, env: { HOOKLEDGER_SHIP_TO: url } });

/** The background outcomes of the source as the centre holds them: status and failure detail, by source id. */
async function centralBackground(name: string) {
  return adminSql<{ ref: string; status: string; detail: string | null; decision: string | null }>(
    `SELECT o.source_ref::text AS ref, o.status, o.failure_detail AS detail, o.decision FROM outcomes o
     WHERE o.mode = 'background' ORDER BY o.source_ref`,
    name,
  );
}

describe('ship: background hooks of a writer that died', { timeout: 180_000 }, () => {
  it('a background outcome shipped pending ends up interrupted centrally once the source recovers it; both ends verify', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    const { url, name } = await freshDatabase();
    const writer = spawn(process.execPath, ['--import', tsxLoader, writerScript, db, '3'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // A failed assertion before the deliberate SIGKILL below must not leave the writer running.
    onTestFinished(() => void writer.kill('SIGKILL'));
    let stdout = '';
    let stderr = '';
    writer.stderr.on('data', (c: Buffer) => (stderr += c));
    const exited = new Promise((resolve) => writer.on('close', resolve));
    await new Promise<void>((resolve, reject) => {
      writer.stdout.on('data', (c: Buffer) => {
        stdout += c;
        if (stdout.includes('\n')) resolve();
      });
      writer.on('close', (code) => reject(new Error(`writer exited ${code}: ${stderr}`)));
    });
    expect(stdout).toMatch(/^committed \d+,\d+,\d+\n$/);

    // Shipped while the writer lives: the background hooks are pending at both ends.
    const first = await ship(url, db);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).shipped).toMatchObject({ invocations: 3, interrupted: 0 });
    expect((await centralBackground(name)).map((o) => o.status)).toEqual(['pending', 'pending', 'pending']);

    writer.kill('SIGKILL');
    await exited;
    // The next ship opens the ledger, whose recovery marks the dead writer's pending hooks interrupted (no chain link), and carries that over.
    const second = await ship(url, db);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).shipped).toMatchObject({ invocations: 0, links: 0, interrupted: 3 });

    const ledger = SqliteLedger.open({ path: db });
    const local = ledger.sqlite
      .prepare(`SELECT id, status, failure_detail AS detail, decision FROM outcomes WHERE mode = 'background' ORDER BY id`)
      .all() as { id: number; status: string; detail: string | null; decision: string | null }[];
    ledger.close();
    expect(local.map((o) => o.status)).toEqual(['interrupted', 'interrupted', 'interrupted']);
    expect(await centralBackground(name)).toEqual(
      local.map((o) => ({ ref: String(o.id), status: o.status, detail: o.detail, decision: null })),
    );

    // Nothing more to carry; the centre verifies the source as the source verifies itself.
    const third = await ship(url, db);
    expect(JSON.parse(third.stdout).shipped).toMatchObject({ links: 0, interrupted: 0 });
    expect((await verifyCentre(url)).problems).toEqual([]);
    expect((await runCli(['verify', '--db', db])).code).toBe(0);
  });
});
