import { afterEach, describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import type { Report } from '../../src/domain/outcomes.js';
import { explainPostgres } from '../../src/ledger/postgres/queries/explain.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { verifyPostgres } from '../../src/ledger/postgres/verify.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { outcomeFromRow, type OutcomeRow } from '../../src/ledger/rows.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createRunner, parseInvocation } from '../../src/runner/runner.js';
import { tempLedger } from '../helpers.js';
import { freshDatabase } from './support.js';

const stores: PostgresStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

const hookSet = defineHooks({
  name: 'parity',
  version: '1',
  redact: { paths: ['toolInput.token'] },
  hooks: [
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 10,
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('rm -rf')
          ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf <script>alert(1)</script>', payload: { rule: 'rm' } }
          : undefined,
    },
    {
      id: 'quote-paths',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 20,
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('cat ')
          ? { decision: 'modify', input: { command: 'cat -- "file"' }, reason: 'quoted' }
          : undefined,
    },
    { id: 'context', point: 'user_prompt_submit', run: () => ({ additionalContext: 'be careful\u2028here' }) },
    { id: 'audit', point: 'pre_tool_use', mode: 'background', run: () => undefined },
    { id: 'post', point: 'post_tool_use', run: () => undefined },
  ],
});

const inputs = [
  { point: 'user_prompt_submit', sessionId: 'p1', prompt: 'clean up \ud83e\uddf9 the repo' },
  {
    point: 'pre_tool_use',
    sessionId: 'p1',
    toolName: 'Bash',
    toolUseId: 'toolu_1',
    toolInput: { command: 'rm -rf /', token: 'ghp_secret' },
  },
  { point: 'pre_tool_use', sessionId: 'p1', toolName: 'Bash', toolUseId: 'toolu_2', toolInput: { command: 'cat file' } },
  {
    point: 'post_tool_use',
    sessionId: 'p1',
    toolName: 'Bash',
    toolUseId: 'toolu_2',
    toolInput: { command: 'cat file' },
    toolResponse: { ok: 1 },
  },
  { point: 'pre_tool_use', sessionId: 'p2', toolName: 'Read', toolUseId: 'toolu_3', toolInput: { path: '/etc/hosts' } },
];

describe('parity: the same scenario on SQLite and PostgreSQL gives the same JSON', () => {
  it('explain (by id and by tool_use_id) and verify', async () => {
    const { ledger } = tempLedger();
    const runner = createRunner({ hookSet, ledger });
    const reports: Report[] = [];
    for (const input of inputs) reports.push(await runner.run(input));
    await runner.close();

    // The same invocations through the PostgreSQL write path, with the runner's results and times.
    const { url } = await freshDatabase();
    const store = await PostgresStore.open({ url, writerId: 'parity' });
    stores.push(store);
    const recorder = store.writer();
    const hookSetId = await recorder.hookSetId(hookSet);
    const finished = ledger.sqlite.prepare('SELECT finished_at FROM invocations WHERE id = ?').pluck();
    const backgroundDone = ledger.sqlite.prepare(`SELECT * FROM outcomes WHERE mode = 'background' AND invocation_id = ?`);
    for (const [i, input] of inputs.entries()) {
      const report = reports[i]!;
      const id = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, report.startedAt);
      expect(id).toBe(report.invocationId);
      const pending = await recorder.finish(id, report, report.outcomes, finished.get(id) as number);
      // Background outcomes: complete them as SQLite recorded them.
      for (const [k, rowId] of pending.entries()) {
        const stored = outcomeFromRow(backgroundDone.all(id)[k] as OutcomeRow);
        await recorder.startBackground(rowId, stored.startedAt!, stored.executionOrder!);
        await recorder.completeBackground(rowId, stored);
      }
    }

    const pool = store.connection.pool;
    for (const ref of [...reports.map((r) => r.invocationId), 'toolu_2', 'toolu_1', '3']) {
      const onSqlite = JSON.parse(JSON.stringify(explain(ledger, ref)));
      const onPostgres = JSON.parse(JSON.stringify(await explainPostgres(pool, store.connection.displayUrl, ref)));
      expect(onPostgres, `explain ${ref}`).toEqual(onSqlite);
    }
    // Spot checks that the scenario exercises what it claims.
    const denied = await explainPostgres(pool, store.connection.displayUrl, 'toolu_1');
    expect(denied).toMatchObject({ invocation: { decision: 'deny' }, decisive: { hookId: 'no-rm', payload: { rule: 'rm' } } });
    expect(denied.redactions.length).toBeGreaterThan(0);
    expect((await explainPostgres(pool, store.connection.displayUrl, 'toolu_2')).related).toHaveLength(1);

    const sqliteVerify = verifyLedger(ledger);
    const postgresVerify = await verifyPostgres(pool, store.connection.displayUrl);
    expect(postgresVerify).toMatchObject({
      ok: true,
      links: sqliteVerify.links,
      records: { invocations: 5, backgroundOutcomes: sqliteVerify.records.backgroundOutcomes },
    });
    // Same records, same encoding: the first link (before any background completion interleaves) is identical.
    expect(postgresVerify.writers[0]!.head.seq).toBe(sqliteVerify.head.seq);
  });
});
