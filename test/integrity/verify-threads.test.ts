import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { deny } from '../../src/domain/results.js';
import { linkHashOfText } from '../../src/ledger/integrity.js';
import { invocationLinkTextSql } from '../../src/ledger/link-text-sql.js';
import { pruneLedger } from '../../src/ledger/prune.js';
import type { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { verifyLedger, type VerifyOptions } from '../../src/ledger/verify.js';
import { lastSplit } from '../../src/ledger/verify-threads.js';
import { createRunner } from '../../src/runner/runner.js';
import { tempLedger } from '../helpers.js';

const DAY = 86_400_000;

afterEach(() => vi.useRealTimers());

const hookSet = defineHooks({
  name: 'split',
  hooks: [
    {
      id: 'guard',
      point: 'pre_tool_use',
      capability: 'guardrail',
      run: (inv) => ((inv.toolInput as { command: string }).command === 'rm' ? deny('no') : undefined),
    },
    { id: 'audit', point: 'pre_tool_use', run: () => undefined },
    { id: 'bg', point: 'pre_tool_use', mode: 'background', run: () => ({ additionalContext: 'seen' }) },
  ],
});

/** `count` invocations as if `daysAgo` days ago: invocation links with background links between them. */
async function history(ledger: SqliteLedger, daysAgo: number, count: number): Promise<void> {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() - daysAgo * DAY);
  const runner = createRunner({ hookSet, ledger });
  for (let i = 0; i < count; i++)
    await runner.run({
      point: 'pre_tool_use',
      sessionId: `s-${daysAgo}`,
      toolName: 'Bash',
      toolInput: { command: i % 4 === 0 ? 'rm' : 'ls' },
    });
  await runner.close();
  vi.useRealTimers();
}

/** A report without its timing, to compare runs. */
function verified(ledger: SqliteLedger, options: VerifyOptions) {
  const { durationMs, ...report } = verifyLedger(ledger, options);
  expect(durationMs).toBeGreaterThanOrEqual(0);
  return report;
}

/** A pruned ledger of a few hundred links; the tests split it into chunks of 25. */
async function ledgerWithPrune() {
  const { ledger, path } = tempLedger();
  await history(ledger, 300, 40);
  await history(ledger, 2, 160);
  await pruneLedger(ledger, { before: Date.now() - 100 * DAY, batchSize: 15, pauseMs: 0 });
  return { ledger, path };
}

const split = { threads: 3, chunkLinks: 25, workersOnly: true } as const;

describe('verify split across worker threads', () => {
  it('reports exactly what one thread reports on a ledger tampered with in several chunks, boundaries included', async () => {
    const { ledger, path } = await ledgerWithPrune();
    const intact = verified(ledger, split);
    expect(intact).toMatchObject({ ok: true, problems: [] });
    expect(lastSplit.chunks).toBeGreaterThan(8);
    expect(lastSplit.byWorkers).toBe(lastSplit.chunks);
    expect(intact).toEqual(verified(ledger, { threads: 1 }));

    const s = ledger.sqlite;
    const [first, head] = s.prepare('SELECT min(seq), max(seq) FROM chain').raw().get() as [number, number];
    const linkAt = (offset: number) =>
      s
        .prepare('SELECT seq, kind, ref_id FROM chain WHERE seq >= ? ORDER BY seq LIMIT 1')
        .raw()
        .get(first + offset) as [number, string, number] | undefined;
    const invocationLinkFrom = (offset: number) =>
      s
        .prepare(`SELECT seq, ref_id FROM chain WHERE seq >= ? AND kind = 'invocation' ORDER BY seq LIMIT 1`)
        .raw()
        .get(first + offset) as [number, number];
    const db = new Database(path);
    // Chunk 1: a decision rewritten.
    db.prepare(`UPDATE invocations SET decision = 'allow' WHERE id = ?`).run(invocationLinkFrom(30)[1]);
    // Chunk 2: an outcome deleted.
    db.prepare('DELETE FROM outcomes WHERE id = (SELECT min(id) FROM outcomes WHERE invocation_id = ?)').run(invocationLinkFrom(60)[1]);
    // Chunk 3: an invocation deleted with its link (a gap).
    const [gapSeq, gapId] = invocationLinkFrom(80);
    db.prepare('DELETE FROM outcomes WHERE invocation_id = ?').run(gapId);
    db.prepare('DELETE FROM invocations WHERE id = ?').run(gapId);
    db.prepare('DELETE FROM chain WHERE seq = ?').run(gapSeq);
    // The last link of a chunk rewritten: the next chunk (another thread) finds its first link does not follow it.
    const boundary = linkAt(4 * 25 - 1)!;
    expect(boundary[0]).toBe(first + 4 * 25 - 1);
    db.prepare(`UPDATE chain SET hash = ? WHERE seq = ?`).run('f'.repeat(64), boundary[0]);
    // A completed background outcome changed, near the head.
    const background = s
      .prepare(`SELECT ref_id FROM chain WHERE kind = 'background' AND seq > ? ORDER BY seq LIMIT 1`)
      .pluck()
      .get(head - 60);
    db.prepare(`UPDATE outcomes SET additional_context = 'edited' WHERE id = ?`).run(background);
    // A fake invocation no link covers.
    db.prepare(
      `INSERT INTO invocations (hook_set_id, point, input_json, invocation_json, status, decision, started_at, pid, host) SELECT hook_set_id, point, input_json, invocation_json, 'completed', 'allow', started_at, pid, host FROM invocations LIMIT 1`,
    ).run();
    db.close();

    const one = verified(ledger, { threads: 1 });
    expect(one.ok).toBe(false);
    expect(new Set(one.problems.map((p) => `${p.kind} ${p.table}`))).toEqual(
      new Set(['changed invocations', 'removed outcomes', 'removed chain', 'changed outcomes', 'inserted invocations']),
    );
    expect(one.problems).toContainEqual(
      expect.objectContaining({ seq: boundary[0], detail: expect.stringMatching(`link ${boundary[0] + 1} does not follow it`) }),
    );
    expect(verified(ledger, split)).toEqual(one);
    expect(lastSplit.byWorkers).toBe(lastSplit.chunks);
    // This thread and the workers together.
    expect(verified(ledger, { threads: 2, chunkLinks: 10 })).toEqual(one);
    // The cap keeps the first problems in chain order, as one walk does.
    const capped = verified(ledger, { threads: 1, maxProblems: 3 });
    expect(capped.problems).toEqual(one.problems.slice(0, 3));
    expect(verified(ledger, { ...split, maxProblems: 3 })).toEqual(capped);
  });

  it('workers whose snapshot is newer than the report (a prune committed meanwhile) leave the walk to the thread that holds it', async () => {
    const { ledger, path } = await ledgerWithPrune();
    const s = ledger.sqlite;
    // Hold a snapshot on verify's connection (its transaction nests in this one), then prune from another process's connection.
    s.exec('BEGIN');
    const links = s.prepare('SELECT count(*) FROM chain').pluck().get() as number;
    const other = (await import('../../src/ledger/sqlite-ledger.js')).SqliteLedger.open({ path });
    const pruned = await pruneLedger(other, { before: Date.now() - DAY, batchSize: 20, pauseMs: 0 });
    other.close();
    expect(pruned.invocations).toBeGreaterThan(0);
    const split3 = verified(ledger, split);
    expect(split3).toMatchObject({ ok: true, links });
    expect(lastSplit.byWorkers).toBe(0);
    expect(split3).toEqual(verified(ledger, { threads: 1 }));
    s.exec('COMMIT');
    // The prune itself verifies, split or not.
    const after = verified(ledger, split);
    expect(after).toMatchObject({ ok: true });
    expect(after.links).toBeLessThan(links);
    expect(after).toEqual(verified(ledger, { threads: 1 }));
  });

  it('hashes the text SQLite builds for every invocation link without a pending outcome (the fast path is taken, not just correct)', async () => {
    const { ledger } = await ledgerWithPrune();
    const rows = ledger.sqlite
      .prepare(
        `SELECT c.hash, c.rows, ${invocationLinkTextSql()} FROM chain c
           LEFT JOIN invocations i ON c.kind = 'invocation' AND i.id = c.ref_id LEFT JOIN hook_sets h ON h.id = i.hook_set_id
           LEFT JOIN outcomes o ON c.kind = 'invocation' AND o.invocation_id = c.ref_id
         WHERE c.kind = 'invocation' GROUP BY c.seq ORDER BY c.seq`,
      )
      .raw()
      .all() as [string, string, Buffer | null][];
    const settled = rows.filter(([, rowsText]) => !rowsText.includes('~'));
    expect(settled.length).toBeGreaterThan(30);
    expect(settled.filter(([hash, , text]) => text !== null && linkHashOfText(text) === hash)).toHaveLength(settled.length);
  });
});
