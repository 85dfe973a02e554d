import { afterEach, describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { verifyPostgres } from '../../src/ledger/postgres/verify.js';
import type { PostgresRecorder } from '../../src/ledger/postgres/write.js';
import { createRunner, parseInvocation } from '../../src/runner/runner.js';
import { tempLedger } from '../helpers.js';
import { adminSql, freshDatabase } from './support.js';

const stores: PostgresStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const hookSet = defineHooks({
  name: 'verify',
  version: '1',
  hooks: [
    { id: 'guard', point: 'pre_tool_use', run: () => undefined },
    { id: 'watch', point: 'pre_tool_use', mode: 'background', run: () => undefined },
  ],
});

/** Records `count` invocations through `recorder`, with the outcomes the real runner produced for them on SQLite. */
async function record(recorder: PostgresRecorder, count: number, complete = true): Promise<number[]> {
  const { ledger } = tempLedger();
  const runner = createRunner({ hookSet, ledger });
  const hookSetId = await recorder.hookSetId(hookSet);
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    const input = { point: 'pre_tool_use', sessionId: `s${i % 3}`, toolName: 'Bash', toolInput: { command: `echo ${i}` } };
    const report = await runner.run(input);
    const id = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, report.startedAt);
    const [pending] = await recorder.finish(id, report, report.outcomes);
    if (complete && pending !== undefined) {
      const outcome = report.outcomes.find((o) => o.status === 'pending')!;
      await recorder.completeBackground(pending, { ...outcome, status: 'completed', startedAt: Date.now(), durationUs: 5 });
    }
    ids.push(id);
  }
  await runner.close();
  return ids;
}

describe('verify on PostgreSQL', () => {
  it('checks every writer chain and names the first bad record and its writer', async () => {
    const { url, name } = await freshDatabase();
    const a = await PostgresStore.open({ url, writerId: 'host-a' });
    const b = await PostgresStore.open({ url, writerId: 'host-b' });
    stores.push(a, b);
    await Promise.all([record(a.writer(), 4), record(b.writer(), 3)]);
    const clean = await verifyPostgres(a.connection.pool, a.connection.displayUrl);
    expect(clean).toMatchObject({ ok: true, links: 14, records: { invocations: 7, backgroundOutcomes: 7 }, problemCount: 0 });
    expect(clean.writers.map((w) => [w.writer, w.links, w.head.seq])).toEqual([
      ['host-a', 8, 8],
      ['host-b', 6, 6],
    ]);

    // An edit outside hookledger to one of host-b's outcomes.
    const [target] = await adminSql<{ id: number; invocation_id: number }>(
      `SELECT o.id::int, o.invocation_id::int FROM outcomes o JOIN invocations i ON i.id = o.invocation_id
       WHERE i.writer_id = 'host-b' AND o.hook_id = 'guard' ORDER BY o.id LIMIT 1`,
      name,
    );
    await adminSql(`UPDATE outcomes SET message = 'looks fine' WHERE id = $1`, name, [target!.id]);
    const edited = await verifyPostgres(a.connection.pool, a.connection.displayUrl);
    expect(edited.ok).toBe(false);
    expect(edited.problems[0]).toMatchObject({ kind: 'changed', table: 'outcomes', id: target!.id, writer: 'host-b' });
    expect(edited.problems[0]!.detail).toBe(
      `writer host-b: outcome #${target!.id} of invocation #${target!.invocation_id} differs from what was committed (link 1)`,
    );
  });

  it('finds deleted records, deleted links, and rows no link covers', async () => {
    const { url, name } = await freshDatabase();
    const a = await PostgresStore.open({ url, writerId: 'host-a' });
    stores.push(a);
    const ids = await record(a.writer(), 3, false);
    // Deleting the last invocation with its link leaves the writer's head pointing past the end.
    await adminSql(`DELETE FROM chain WHERE kind = 'invocation' AND ref_id = $1`, name, [ids[2]]);
    await adminSql(`DELETE FROM invocations WHERE id = $1`, name, [ids[2]]);
    // A decision nobody committed through hookledger.
    await adminSql(
      `INSERT INTO invocations (hook_set_id, point, invocation_json, status, decision, started_at, pid, host, writer_id)
       VALUES (1, 'pre_tool_use', '{}', 'completed', 'allow', 0, 1, 'x', 'host-a')`,
      name,
    );
    const report = await verifyPostgres(a.connection.pool, a.connection.displayUrl);
    expect(report.ok).toBe(false);
    expect(report.problems.map((p) => [p.kind, p.table, p.writer])).toEqual([
      ['removed', 'chain', 'host-a'],
      ['inserted', 'invocations', 'host-a'],
      // Its outcomes stay (PostgreSQL enforces no reference: docs/ship.md, Central schema); with the link gone, no chain names a writer.
      ['inserted', 'outcomes', null],
      ['inserted', 'outcomes', null],
    ]);
    expect(report.problems[0]!.detail).toBe(
      'writer host-a: its recorded head is link 3 but the chain ends at link 2 (the last links were deleted)',
    );
  });
  it('names an outcome whose invocation was deleted (no foreign key on PostgreSQL) with the writer whose link covered it', async () => {
    const { url, name } = await freshDatabase();
    const a = await PostgresStore.open({ url, writerId: 'host-a' });
    stores.push(a);
    const ids = await record(a.writer(), 3);
    expect((await verifyPostgres(a.connection.pool, a.connection.displayUrl)).ok).toBe(true);
    const outcomes = await adminSql<{ id: number }>('SELECT id::int FROM outcomes WHERE invocation_id = $1 ORDER BY id', name, [ids[1]]);
    expect(outcomes.length).toBeGreaterThan(0);
    await adminSql('DELETE FROM invocations WHERE id = $1', name, [ids[1]]);
    const [link] = await adminSql<{ seq: number }>(`SELECT seq::int FROM chain WHERE kind = 'invocation' AND ref_id = $1`, name, [ids[1]]);
    const report = await verifyPostgres(a.connection.pool, a.connection.displayUrl);
    expect(report.ok).toBe(false);
    expect(report.problems.filter((p) => p.table === 'outcomes')).toEqual(
      outcomes.map((o) => ({
        kind: 'inserted',
        table: 'outcomes',
        id: o.id,
        seq: link!.seq,
        writer: 'host-a',
        detail: `writer host-a: outcome #${o.id} has no invocation: invocation #${ids[1]} (link ${link!.seq}) is gone`,
      })),
    );
    expect(report.problems).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'removed', table: 'invocations', id: ids[1] })]),
    );
  });
});
