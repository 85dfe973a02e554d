import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import { invocationEntry, INVOCATION_SELECT, linkHash, outcomeEntry, GENESIS_HASH } from '../../src/ledger/integrity.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { recoverPostgres } from '../../src/ledger/postgres/recovery.js';
import { createRunner, parseInvocation } from '../../src/runner/runner.js';
import { sleep, tempLedger } from '../helpers.js';
import { adminSql, adminUrl, freshDatabase } from './support.js';

const stores: PostgresStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function store(options: { writerId?: string; leaseMs?: number; url?: string } = {}) {
  const url = options.url ?? (await freshDatabase()).url;
  const s = await PostgresStore.open({ url, writerId: options.writerId ?? 'writer-a', leaseMs: options.leaseMs });
  stores.push(s);
  return { store: s, url, db: new URL(url).pathname.slice(1) };
}

const OUTCOME_COLUMNS_SQL = `id, invocation_id, hook_id, point, priority, registration_index, execution_order, mode,
    capability, runtime, status, decision, decisive::int, reason_code, message, payload_json, modified_input_json,
    additional_context, failure_reason, failure_detail, skip_reason, skipped_by, redactions_json, timeout_ms,
    started_at, duration_us`;

async function rows(db: string, text: string, values: unknown[] = []): Promise<unknown[][]> {
  const client = new pg.Client({ connectionString: adminUrl(db) });
  await client.connect();
  try {
    client.setTypeParser(20, (v: string) => Number(v));
    return (await client.query<unknown[]>({ text, values, rowMode: 'array' })).rows;
  } finally {
    await client.end();
  }
}

const hookSet = defineHooks({
  name: 'golden',
  version: '1',
  hooks: [
    { id: 'observe', point: 'pre_tool_use', run: () => undefined },
    { id: 'later', point: 'pre_tool_use', mode: 'background', run: () => undefined },
  ],
});
// Hostile text: a lone surrogate (stored as three U+FFFD on both engines), astral and RTL characters.
const input = {
  point: 'pre_tool_use',
  sessionId: 'sess-\ud800-1',
  toolName: 'Bash',
  toolUseId: 'toolu_golden',
  cwd: '/work/\u202e\ud83d\ude00',
  toolInput: { command: 'echo "\ud800" && ls' },
};

describe('the PostgreSQL write path', () => {
  it('golden: the same record hashes alike on SQLite and PostgreSQL (byte-identical link encoding)', async () => {
    // SQLite, through the real runner.
    const { ledger } = tempLedger();
    const runner = createRunner({ hookSet, ledger });
    const report = await runner.run(input);
    await runner.close();
    const sqliteLink = ledger.sqlite
      .prepare(`SELECT seq, kind, ref_id, prev_hash, hash, at, rows FROM chain WHERE kind = 'invocation'`)
      .get() as {
      hash: string;
      at: number;
      rows: string;
    };
    // PostgreSQL, the same invocation, result and outcomes at the same times.
    const { store: s, db } = await store();
    const recorder = s.writer();
    const hookSetId = await recorder.hookSetId(hookSet);
    const id = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, report.startedAt);
    expect([hookSetId, id]).toEqual([1, 1]);
    const pending = await recorder.finish(id, report, report.outcomes, sqliteLink.at);
    expect(pending).toHaveLength(1);
    const [pgLink] = await adminSql<{ hash: string; rows: string; prev_hash: string; seq: number }>(
      `SELECT seq::int, prev_hash, hash, rows FROM chain WHERE writer_id = 'writer-a'`,
      db,
    );
    expect(pgLink!.prev_hash).toBe(GENESIS_HASH);
    expect(pgLink!.rows).toBe(sqliteLink.rows);
    expect(pgLink!.hash).toBe(sqliteLink.hash);

    // And what PostgreSQL gives back re-encodes to that hash (as verify will recompute it).
    const [invocationRow] = await rows(db, INVOCATION_SELECT.replace('?', '$1'), [id]);
    const outcomeRows = await rows(db, `SELECT ${OUTCOME_COLUMNS_SQL} FROM outcomes WHERE invocation_id = $1 ORDER BY id`, [id]);
    const entries = [invocationEntry(invocationRow!), ...outcomeRows.map((r) => outcomeEntry(r, r[10] === 'pending'))];
    expect(linkHash(GENESIS_HASH, 1, 'invocation', id, sqliteLink.at, entries)).toBe(pgLink!.hash);
    expect(invocationRow![4]).toBe('sess-\ufffd\ufffd\ufffd-1');
  });

  it('records running before any hook runs, commits final state, outcomes and link together, completes background with its own link', async () => {
    const { store: s, db } = await store();
    const recorder = s.writer();
    const hookSetId = await recorder.hookSetId(hookSet);
    const id = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, Date.now());
    expect(await adminSql(`SELECT status, decision FROM invocations WHERE id = $1`, db, [id])).toEqual([
      { status: 'running', decision: null },
    ]);
    expect(await adminSql(`SELECT count(*)::int AS n FROM outcomes`, db)).toEqual([{ n: 0 }]);

    const { ledger } = tempLedger();
    const runner = createRunner({ hookSet, ledger });
    const report = await runner.run(input);
    await runner.close();
    const [pendingId] = await recorder.finish(id, report, report.outcomes);
    expect(await adminSql(`SELECT status, decision FROM invocations WHERE id = $1`, db, [id])).toEqual([
      { status: 'completed', decision: 'none' },
    ]);
    expect(await adminSql(`SELECT hook_id, status, decisive FROM outcomes ORDER BY id`, db)).toEqual([
      { hook_id: 'observe', status: 'completed', decisive: false },
      { hook_id: 'later', status: 'pending', decisive: false },
    ]);
    await recorder.startBackground(pendingId!, Date.now(), 1);
    const done = report.outcomes.find((o) => o.hookId === 'later')!;
    await recorder.completeBackground(pendingId!, {
      ...done,
      status: 'completed',
      startedAt: Date.now(),
      durationUs: 12,
      message: 'nul\0here',
    });
    const links = await adminSql<{ seq: number; kind: string; ref_id: number; prev_hash: string; hash: string; at: number }>(
      `SELECT seq::int, kind, ref_id::int, prev_hash, hash, at::float8 AS at FROM chain WHERE writer_id = 'writer-a' ORDER BY seq`,
      db,
    );
    expect(links.map((l) => [l.seq, l.kind, l.ref_id])).toEqual([
      [1, 'invocation', id],
      [2, 'background', pendingId],
    ]);
    expect(links[1]!.prev_hash).toBe(links[0]!.hash);
    const [outcomeRow] = await rows(db, `SELECT ${OUTCOME_COLUMNS_SQL} FROM outcomes WHERE id = $1`, [pendingId]);
    expect(outcomeRow![14]).toBe('nul\u2400here');
    expect(linkHash(links[0]!.hash, 2, 'background', pendingId!, links[1]!.at, [outcomeEntry(outcomeRow!, false)])).toBe(links[1]!.hash);
    expect(await adminSql(`SELECT head_seq::int, head_hash FROM writers`, db)).toEqual([{ head_seq: 2, head_hash: links[1]!.hash }]);
  });

  it('the real runner with background hooks: a start recorded after the hook ended never changes a completed, linked outcome', async () => {
    const { store: s, db } = await store();
    // The runner does not wait for the start to be recorded before the hook ends; on a pool the two
    // writes travel on different connections, so the completion must wait for the start.
    const runner = createRunner({ hookSet, ledger: s });
    await Promise.all(Array.from({ length: 24 }, (_, i) => runner.run({ ...input, toolUseId: `toolu_${i}` })));
    await runner.close();
    expect(await adminSql(`SELECT status, count(*)::int AS n FROM outcomes WHERE hook_id = 'later' GROUP BY status`, db)).toEqual([
      { status: 'completed', n: 24 },
    ]);
    expect(await adminSql(`SELECT count(*)::int AS n FROM outcomes WHERE hook_id = 'later' AND execution_order IS NULL`, db)).toEqual([
      { n: 0 },
    ]);
    const { verifyPostgres } = await import('../../src/ledger/postgres/verify.js');
    const report = await verifyPostgres(s.connection.pool, s.connection.displayUrl);
    expect(report.problems).toEqual([]);
    expect(report.records).toMatchObject({ invocations: 24, backgroundOutcomes: 24 });
  });

  it('a failed commit leaves nothing half-written: the invocation stays running, no outcome, no link', async () => {
    const { store: s, db } = await store();
    const recorder = s.writer();
    const hookSetId = await recorder.hookSetId(hookSet);
    const id = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, Date.now());
    const { ledger } = tempLedger();
    const runner = createRunner({ hookSet, ledger });
    const report = await runner.run(input);
    await runner.close();
    // The link cannot be appended once the writer's row is gone: the whole commit must roll back.
    await adminSql(`DELETE FROM writers`, db);
    const error = await recorder.finish(id, report, report.outcomes).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/^writer writer-a is not registered in postgres:\/\/postgres@127\.0\.0\.1:\d+\/hl_\w+$/);
    expect(await adminSql(`SELECT status FROM invocations`, db)).toEqual([{ status: 'running' }]);
    expect(await adminSql(`SELECT (SELECT count(*) FROM outcomes)::int AS o, (SELECT count(*) FROM chain)::int AS c`, db)).toEqual([
      { o: 0, c: 0 },
    ]);
  });

  it('writers keep separate chains; a writer whose lease ran out has its running rows interrupted by the next opener', async () => {
    const { store: a, url, db } = await store({ writerId: 'host-a', leaseMs: 300 });
    const b = (await store({ url, writerId: 'host-b', leaseMs: 60_000 })).store;
    const ra = a.writer();
    const rb = b.writer();
    const hsA = await ra.hookSetId(hookSet);
    const hsB = await rb.hookSetId(hookSet);
    expect(hsA).toBe(hsB);
    const inFlightA = await ra.begin(hsA, parseInvocation(input) as Invocation, Date.now());
    const inFlightB = await rb.begin(hsB, parseInvocation(input) as Invocation, Date.now());
    // Writer A's process "dies": no more renewals. Its lease runs out after 300 ms.
    a.lease.stop();
    await sleep(500);
    // Recovery as another host would run it (this host's pids are alive, so only the lease counts).
    const recovered = await recoverPostgres(b.connection.pool, Date.now(), 'another-host');
    expect(recovered.invocations).toBe(1);
    expect(await adminSql(`SELECT id::int, status, message FROM invocations ORDER BY id`, db)).toEqual([
      { id: inFlightA, status: 'interrupted', message: 'writer host-a stopped renewing its lease before the decision was committed' },
      { id: inFlightB, status: 'running', message: null },
    ]);
  });
});
