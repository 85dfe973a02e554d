import { afterEach, describe, expect, it, vi } from 'vitest';
import { LedgerError, NotFoundError, OptionError } from '../../src/domain/errors.js';
import { defineHooks } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import { deny } from '../../src/domain/results.js';
import { parseTimeBound } from '../../src/domain/time.js';
import { listHolds, placeHold } from '../../src/ledger/holds.js';
import { listHoldsPostgres, placeHoldPostgres, releaseHoldPostgres } from '../../src/ledger/postgres/holds.js';
import { prunePostgres } from '../../src/ledger/postgres/prune.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { verifyPostgres } from '../../src/ledger/postgres/verify.js';
import { pruneLedger } from '../../src/ledger/prune.js';
import type { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { createRunner, parseInvocation } from '../../src/runner/runner.js';
import { runCli } from '../cli-helpers.js';
import { tempLedger } from '../helpers.js';
import { adminSql, freshDatabase } from './support.js';

const DAY = 86_400_000;
const stores: PostgresStore[] = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
});

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

async function open(url: string, writerId: string): Promise<PostgresStore> {
  const store = await PostgresStore.open({ url, writerId });
  stores.push(store);
  return store;
}

/** Runs `count` invocations of a session as if it were `daysAgo` days ago, through the real runner. */
async function history(ledger: PostgresStore | SqliteLedger, sessionId: string, daysAgo: number, count: number): Promise<void> {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(Date.now() - daysAgo * DAY);
  try {
    const runner = createRunner({ hookSet, ledger });
    for (let i = 0; i < count; i++)
      await runner.run({ point: 'pre_tool_use', sessionId, toolName: 'Bash', toolInput: { command: i % 3 === 0 ? 'rm' : 'ls' } });
    await runner.close();
  } finally {
    vi.useRealTimers();
  }
}

async function sessions(database: string): Promise<Record<string, number>> {
  const rows = await adminSql<{ s: string; n: number }>(
    'SELECT session_id AS s, count(*)::int AS n FROM invocations GROUP BY session_id ORDER BY session_id',
    database,
  );
  return Object.fromEntries(rows.map((r) => [r.s, r.n]));
}

/** The parts of a prune report that do not depend on timing or ids. */
const comparable = ({ invocations, outcomes, links, batches, held, inProgress, dryRun }: Awaited<ReturnType<typeof pruneLedger>>) => ({
  invocations,
  outcomes,
  links,
  batches,
  held,
  inProgress,
  dryRun,
});

describe('prune on PostgreSQL', () => {
  it('removes what SQLite removes, keeps held, recent and in-progress sessions, and every writer’s chain still verifies', async () => {
    const { url, name } = await freshDatabase();
    const a = await open(url, 'host-a');
    const b = await open(url, 'host-b');
    const gone = await open(url, 'host-gone');
    const pruner = await open(url, 'pruner');
    const { ledger: sqlite } = tempLedger();
    // The same history on both engines; on PostgreSQL spread over three writers' chains, interleaved,
    // so the removed links are runs at the start and in the middle of chains, and (host-gone) a whole chain.
    const steps: [PostgresStore, string, number, number][] = [
      [a, 's-old-1', 400, 4],
      [b, 's-old-1', 400, 3],
      [gone, 's-gone', 399, 3],
      [a, 's-held', 390, 2],
      [b, 's-held', 390, 2],
      [a, 's-old-2', 200, 3],
      [b, 's-recent', 10, 2],
      [a, 's-old-2', 199, 2],
      [a, 's-recent', 5, 1],
    ];
    for (const [store, session, days, count] of steps) {
      await history(store, session, days, count);
      await history(sqlite, session, days, count);
    }
    // The history was written with the clock set back, so the writers' leases are in the past: renew them,
    // or the next open would rightly mark their running rows interrupted.
    for (const store of [a, b, gone]) await store.lease.renew();
    // An invocation of an old session still running (its process is alive: this one).
    const recorder = a.writer();
    const running = await recorder.begin(
      await recorder.hookSetId(hookSet),
      parseInvocation({ point: 'pre_tool_use', sessionId: 's-old-1', toolName: 'Bash', toolInput: { command: 'ls' } }) as Invocation,
      Date.now() - 400 * DAY,
    );
    const sqliteRecorder = sqlite.writer();
    sqliteRecorder.begin(
      sqliteRecorder.hookSetId(hookSet),
      parseInvocation({ point: 'pre_tool_use', sessionId: 's-old-1', toolName: 'Bash', toolInput: { command: 'ls' } }) as Invocation,
      Date.now() - 400 * DAY,
    );

    const hold = await placeHoldPostgres(a.connection.pool, a.connection.displayUrl, 's-held', 'case 42', 'alice');
    expect(hold).toMatchObject({ sessionId: 's-held', reason: 'case 42', heldBy: 'alice', invocations: 4 });
    placeHold(sqlite, 's-held', 'case 42', 'alice');

    const before = parseTimeBound('180d');
    const dry = await prunePostgres(pruner, { before, dryRun: true });
    expect(comparable(dry)).toEqual(comparable(await pruneLedger(sqlite, { before, dryRun: true })));
    expect(dry).toMatchObject({ invocations: 15, held: [{ sessionId: 's-held', invocations: 4 }], inProgress: 1 });

    const report = await prunePostgres(pruner, { before, batchSize: 4 });
    const sqliteReport = await pruneLedger(sqlite, { before, batchSize: 4 });
    expect(comparable(report)).toEqual(comparable(sqliteReport));
    expect(report).toMatchObject({ invocations: 15, batches: 4, inProgress: 1 });
    expect(report.checkpoints).toHaveLength(4);
    expect(await sessions(name)).toEqual({ 's-held': 4, 's-old-1': 1, 's-recent': 3 });
    expect(await adminSql(`SELECT id::int, status FROM invocations WHERE session_id = 's-old-1'`, name)).toEqual([
      { id: running, status: 'running' },
    ]);
    // The checkpoints are links of the pruner's own chain; each names the writers whose links it removed.
    const checkpoints = await adminSql<{ removed_json: string }>('SELECT removed_json FROM prune_checkpoints ORDER BY id', name);
    const writersNamed = new Set(checkpoints.flatMap((c) => (JSON.parse(c.removed_json) as unknown[][]).map((run) => run[3])));
    expect([...writersNamed].sort()).toEqual(['host-a', 'host-b', 'host-gone']);
    expect(await adminSql(`SELECT DISTINCT writer_id FROM chain WHERE kind = 'checkpoint'`, name)).toEqual([{ writer_id: 'pruner' }]);
    // host-gone's whole chain was pruned: only its head in `writers` remains.
    expect(await adminSql(`SELECT count(*)::int AS n FROM chain WHERE writer_id = 'host-gone'`, name)).toEqual([{ n: 0 }]);

    const verified = await verifyPostgres(pruner.connection.pool, pruner.connection.displayUrl);
    expect(verified.problems).toEqual([]);
    expect(verified).toMatchObject({ ok: true, prunedLinks: report.links, records: { invocations: 7, checkpoints: 4 }, uncommitted: 1 });

    // Releasing the hold lets the next prune take the session; written after a prune, more links still verify.
    await releaseHoldPostgres(a.connection.pool, a.connection.displayUrl, 's-held');
    await history(b, 's-recent', 1, 2);
    expect((await prunePostgres(pruner, { before })).invocations).toBe(4);
    expect(await sessions(name)).toEqual({ 's-old-1': 1, 's-recent': 5 });
    const again = await verifyPostgres(pruner.connection.pool, pruner.connection.displayUrl);
    expect(again.problems).toEqual([]);
    expect(again).toMatchObject({ ok: true, records: { checkpoints: 5 } });
  }, 60_000);

  it('after a prune, removals outside hookledger are still caught, including of a checkpoint', async () => {
    const { url, name } = await freshDatabase();
    const store = await open(url, 'w');
    await history(store, 's-old', 300, 4);
    await history(store, 's-new', 1, 3);
    await prunePostgres(store, { before: parseTimeBound('180d') });
    expect((await verifyPostgres(store.connection.pool, store.connection.displayUrl)).ok).toBe(true);
    const [{ newest }] = (await adminSql<{ newest: number }>('SELECT max(id)::int AS newest FROM invocations', name)) as [
      { newest: number },
    ];
    await adminSql('DELETE FROM invocations WHERE id = $1', name, [newest]);
    await adminSql('DELETE FROM prune_checkpoints', name);
    const problems = (await verifyPostgres(store.connection.pool, store.connection.displayUrl)).problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'removed', table: 'prune_checkpoints', writer: 'w' }),
        expect.objectContaining({ kind: 'removed', table: 'invocations', id: newest, writer: 'w' }),
      ]),
    );
    // Without its checkpoint, the pruned links are a gap nobody accounts for.
    expect(problems[0]).toMatchObject({ kind: 'removed', table: 'chain', writer: 'w' });
  }, 60_000);

  it('a forged checkpoint does not excuse deleted links, and a chain cut at its head is still caught', async () => {
    const { url, name } = await freshDatabase();
    const store = await open(url, 'w');
    await history(store, 's', 1, 5);
    // Delete the last two records with their links, and add a checkpoint claiming them, with no link of its own.
    const links = await adminSql<{ seq: number; hash: string; ref_id: number }>(
      `SELECT seq::int, hash, ref_id::int FROM chain WHERE writer_id = 'w' AND kind = 'invocation' ORDER BY seq DESC LIMIT 1`,
      name,
    );
    const last = links[0]!;
    await adminSql(`DELETE FROM chain WHERE writer_id = 'w' AND seq >= $1`, name, [last.seq]);
    await adminSql(`DELETE FROM invocations WHERE id = $1`, name, [last.ref_id]);
    await adminSql(`INSERT INTO prune_checkpoints (at, before, invocations, outcomes, removed_json) VALUES (0, 0, 1, 2, $1)`, name, [
      JSON.stringify([[last.seq, last.seq + 10, last.hash, 'w']]),
    ]);
    const report = await verifyPostgres(store.connection.pool, store.connection.displayUrl);
    expect(report.ok).toBe(false);
    expect(report.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ kind: 'removed', table: 'chain', writer: 'w' }),
        expect.objectContaining({ kind: 'inserted', table: 'prune_checkpoints' }),
      ]),
    );
  }, 60_000);

  it('a prune while writers write loses nothing of theirs, and every chain verifies', async () => {
    const { url, name } = await freshDatabase();
    const old = await open(url, 'old');
    await history(old, 's-old', 365, 120);
    const writers = await Promise.all(['w0', 'w1', 'w2'].map((id) => open(url, id)));
    const pruner = await open(url, 'pruner');
    const writing = Promise.all(
      writers.map(async (store, i) => {
        const runner = createRunner({ hookSet, ledger: store });
        for (let n = 0; n < 30; n++)
          await runner.run({ point: 'pre_tool_use', sessionId: `s-w${i}`, toolName: 'Bash', toolInput: { command: 'ls' } });
        await runner.close();
      }),
    );
    const pruned = await prunePostgres(pruner, { before: parseTimeBound('180d'), batchSize: 10, pauseMs: 10 });
    await writing;
    expect(pruned.invocations).toBe(120);
    expect(await sessions(name)).toEqual({ 's-w0': 30, 's-w1': 30, 's-w2': 30 });
    const report = await verifyPostgres(pruner.connection.pool, pruner.connection.displayUrl);
    expect(report.problems).toEqual([]);
    expect(report.records.invocations).toBe(90);
  }, 90_000);

  it('refuses a cutoff in the future and a bad batch size as SQLite does; a failed batch is one line, exit 3, rolled back', async () => {
    const { url, name } = await freshDatabase();
    const store = await open(url, 'w');
    const future = prunePostgres(store, { before: Date.now() + DAY });
    await expect(future).rejects.toBeInstanceOf(OptionError);
    await expect(future).rejects.toMatchObject({ option: 'before', message: expect.stringMatching(/^before: .* is in the future/) });
    await expect(prunePostgres(store, { before: 0, batchSize: 0 })).rejects.toMatchObject({
      option: 'batchSize',
      message: 'batchSize: must be an integer from 1 to 100000, got 0',
    });

    await history(store, 's-old', 300, 3);
    // A trigger that fails the checkpoint insert: the batch's deletes must roll back with it.
    await adminSql(
      `CREATE FUNCTION hl_refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by test'; END $$;
       CREATE TRIGGER hl_refuse BEFORE INSERT ON prune_checkpoints FOR EACH ROW EXECUTE FUNCTION hl_refuse();`,
      name,
    );
    const error = await prunePostgres(store, { before: parseTimeBound('180d') }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerError);
    expect((error as LedgerError).exitCode).toBe(3);
    expect((error as LedgerError).message).toMatch(
      /^prune stopped after 0 batches \(0 invocations removed\) in postgres:\/\/postgres@127\.0\.0\.1:\d+\/hl_\w+: refused by test$/,
    );
    expect(await sessions(name)).toEqual({ 's-old': 3 });
    expect((await verifyPostgres(store.connection.pool, store.connection.displayUrl)).ok).toBe(true);
  }, 60_000);
});

describe('legal holds on PostgreSQL', () => {
  it('place, update, list and release with SQLite’s answers and errors', async () => {
    const { url } = await freshDatabase();
    const store = await open(url, 'w');
    const { pool, displayUrl } = store.connection;
    const { ledger: sqlite } = tempLedger();
    await history(store, 's-1', 1, 2);
    await placeHoldPostgres(pool, displayUrl, 's-1', 'case 1', 'alice');
    const updated = await placeHoldPostgres(pool, displayUrl, 's-1', 'case 1, extended', 'bob');
    expect(updated).toMatchObject({ sessionId: 's-1', reason: 'case 1, extended', heldBy: 'bob', invocations: 2 });
    expect(typeof updated.createdAt).toBe('number');
    await placeHoldPostgres(pool, displayUrl, 's-2', 'case 2');
    const holds = await listHoldsPostgres(pool, displayUrl);
    expect(holds.map((h) => [h.sessionId, h.invocations])).toEqual([
      ['s-1', 2],
      ['s-2', 0],
    ]);
    // The same rows as SQLite's, apart from the time.
    placeHold(sqlite, 's-1', 'case 1, extended', 'bob');
    expect(Object.keys(holds[0]!).sort()).toEqual(Object.keys(listHolds(sqlite)[0]!).sort());

    await releaseHoldPostgres(pool, displayUrl, 's-1');
    expect((await listHoldsPostgres(pool, displayUrl)).map((h) => h.sessionId)).toEqual(['s-2']);
    const missing = await releaseHoldPostgres(pool, displayUrl, 's-1').catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).message).toMatch(/^session "s-1" is not under legal hold in postgres:\/\/postgres@/);
    await expect(placeHoldPostgres(pool, displayUrl, 's-3', ' ')).rejects.toThrow(
      new OptionError('reason', 'must say why the session is held (e.g. a case number)'),
    );
    await expect(placeHoldPostgres(pool, displayUrl, ' ', 'x')).rejects.toThrow('sessionId: must not be blank');
  }, 60_000);
});

describe('hookledger prune / hold / verify on PostgreSQL', () => {
  it('holds a session, prunes around it, and verify passes on every writer’s chain', async () => {
    const { url, name } = await freshDatabase();
    const a = await open(url, 'host-a');
    const b = await open(url, 'host-b');
    await history(a, 's-a', 300, 3);
    await history(b, 's-b', 300, 2);
    await history(b, 's-new', 1, 2);
    for (const store of stores.splice(0)) await store.close();

    expect((await runCli(['hold', 's-b', '--reason', 'litigation 7', '--db', url])).code).toBe(0);
    const list = await runCli(['hold', '--list', '--db', url, '--json']);
    expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ sessionId: 's-b', invocations: 2, reason: 'litigation 7' })]);
    const pruned = await runCli(['prune', '--before', '90d', '--db', url, '--json'], { env: { HOOKLEDGER_WRITER_ID: 'admin' } });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({
      invocations: 3,
      links: 3 + 2, // the first of s-a is denied: its background hook never ran
      batches: 1,
      held: [{ sessionId: 's-b', invocations: 2 }],
    });
    const text = await runCli(['prune', '--before', '90d', '--db', url, '--dry-run']);
    expect(text.stdout).toContain('would delete 0 invocations');
    expect(text.stdout).toContain('s-b');

    const verified = await runCli(['verify', '--db', url, '--json']);
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, prunedLinks: 5, records: { invocations: 4, checkpoints: 1 } });
    expect((await runCli(['hold', '--release', 's-b', '--db', url])).code).toBe(0);
    const missing = await runCli(['hold', '--release', 's-b', '--db', url]);
    expect(missing.code).toBe(4);
    expect(missing.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(await sessions(name)).toEqual({ 's-b': 2, 's-new': 2 });
    // The session list, from summaries the prune left stale, counts what remains.
    const listed = await runCli(['sessions', '--db', url, '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const rows = (JSON.parse(listed.stdout) as { rows: { sessionId: string; invocations: number }[] }).rows;
    expect(Object.fromEntries(rows.map((r) => [r.sessionId, r.invocations]))).toEqual({ 's-b': 2, 's-new': 2 });

    // A record deleted outside hookledger after the prune: verify exits 5 naming it and its writer.
    await adminSql(`DELETE FROM invocations WHERE session_id = 's-new'`, name);
    const broken = await runCli(['verify', '--db', url]);
    expect(broken.code).toBe(5);
    expect(broken.stderr).toMatch(/writer host-b: invocation #\d+ \(link \d+\) is gone/);
  }, 120_000);
});
