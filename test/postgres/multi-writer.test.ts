import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { recoverPostgres } from '../../src/ledger/postgres/recovery.js';
import { verifyPostgres } from '../../src/ledger/postgres/verify.js';
import { tsxLoader } from '../cli-helpers.js';
import { sleep } from '../helpers.js';
import { adminSql, freshDatabase } from './support.js';

const script = join(import.meta.dirname, '../fixtures/scripts/pg-writer.ts');
const stores: PostgresStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

function writer(url: string, id: string, count: number, leaseMs: number) {
  const child = spawn(process.execPath, ['--import', tsxLoader, script, url, id, String(count), '8', String(leaseMs)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const acked: number[] = [];
  let stderr = '';
  let buffered = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    const lines = buffered.split('\n');
    buffered = lines.pop()!;
    for (const line of lines) if (line.startsWith('ack ')) acked.push(Number(line.slice(4)));
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, acked, exited, stderr: () => stderr };
}

describe('several writer processes on one PostgreSQL ledger', () => {
  it('3 processes × 8 concurrent: every acknowledged decision once, every chain verifies; a SIGKILLed writer’s in-flight rows are interrupted after its lease', async () => {
    const { url, name } = await freshDatabase();
    const leaseMs = 4000;
    const a = writer(url, 'host-a', 120, leaseMs);
    const b = writer(url, 'host-b', 120, leaseMs);
    const victim = writer(url, 'host-c', 100_000, leaseMs);
    // Kill the third writer mid-load, once it has committed a good number of decisions.
    const deadline = Date.now() + 60_000;
    while (victim.acked.length < 40 && Date.now() < deadline) await sleep(20);
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    expect((await victim.exited).signal).toBe('SIGKILL');

    // Recovery as a process on another machine would run it: only the lease tells it host-c is gone.
    const observer = await PostgresStore.open({ url, writerId: 'observer', readonly: true });
    stores.push(observer);
    // What host-c had begun but not committed when it died (8 loops in flight: almost surely some).
    const running = await adminSql<{ id: number }>(
      `SELECT id::int FROM invocations WHERE status = 'running' AND writer_id = 'host-c'`,
      name,
    );
    expect(running.length).toBeGreaterThan(0);
    const early = await recoverPostgres(observer.connection.pool, Date.now(), 'another-host');
    expect(early.invocations).toBe(0); // host-c's lease has not run out yet

    const [ra, rb] = await Promise.all([a.exited, b.exited]);
    expect(ra.code, a.stderr()).toBe(0);
    expect(rb.code, b.stderr()).toBe(0);
    expect(a.acked).toHaveLength(120);
    expect(b.acked).toHaveLength(120);

    await sleep(Math.max(0, killedAt + leaseMs + 300 - Date.now()));
    // Whoever opens next recovers them (or a live writer's renewal sweep got there first: postgres/store.ts).
    await recoverPostgres(observer.connection.pool, Date.now(), 'another-host');

    const rows = await adminSql<{ id: number; status: string; writer_id: string }>(
      `SELECT id::int, status, writer_id FROM invocations`,
      name,
    );
    const byId = new Map(rows.map((r) => [r.id, r]));
    // Every acknowledged decision is there exactly once (ids are unique keys), committed.
    for (const id of [...a.acked, ...b.acked, ...victim.acked]) expect(byId.get(id)?.status, `invocation ${id}`).toBe('completed');
    expect(rows.filter((r) => r.status === 'running')).toEqual([]);
    for (const { id } of running) expect(byId.get(id)?.status).toBe('interrupted');

    const report = await verifyPostgres(observer.connection.pool, observer.connection.displayUrl);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.writers.map((w) => w.writer)).toEqual(['host-a', 'host-b', 'host-c']);
  }, 120_000);
});
