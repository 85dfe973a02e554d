import { Readable, Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { defineHooks, type HookSet } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import type { Report } from '../../src/domain/outcomes.js';
import { explainPostgres } from '../../src/ledger/postgres/queries/explain.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import type { PostgresRecorder } from '../../src/ledger/postgres/write.js';
import type { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { verifyPostgres } from '../../src/ledger/postgres/verify.js';
import { DENIAL_GROUPS } from '../../src/ledger/queries/denials.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { outcomeFromRow, type OutcomeRow } from '../../src/ledger/rows.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { RecordingLedger } from '../../src/runner/recorder.js';
import { createRunner, parseInvocation } from '../../src/runner/runner.js';
import { tempLedger } from '../helpers.js';
import { freshDatabase } from './support.js';

const stores: PostgresStore[] = [];

/**
 * Writes what the runner recorded on SQLite into PostgreSQL through its write path, with the
 * runner's results and times and each entry's host (undefined: this machine); background
 * outcomes are completed as SQLite recorded them. The ids come out the same.
 */
async function copyToPostgres(
  ledger: SqliteLedger,
  store: PostgresStore,
  hooks: HookSet,
  entries: [host: string | undefined, input: unknown][],
  reports: Report[],
): Promise<void> {
  const recorders = new Map<string | undefined, PostgresRecorder>();
  const finished = ledger.sqlite.prepare('SELECT finished_at FROM invocations WHERE id = ?').pluck();
  const backgroundDone = ledger.sqlite.prepare(`SELECT * FROM outcomes WHERE mode = 'background' AND invocation_id = ?`);
  for (const [i, [host, input]] of entries.entries()) {
    if (!recorders.has(host)) recorders.set(host, store.writer(host === undefined ? {} : { host }));
    const recorder = recorders.get(host)!;
    const report = reports[i]!;
    const id = await recorder.begin(await recorder.hookSetId(hooks), parseInvocation(input) as Invocation, report.startedAt);
    expect(id).toBe(report.invocationId);
    const pending = await recorder.finish(id, report, report.outcomes, finished.get(id) as number);
    for (const [k, rowId] of pending.entries()) {
      const stored = outcomeFromRow(backgroundDone.all(id)[k] as OutcomeRow);
      await recorder.startBackground(rowId, stored.startedAt!, stored.executionOrder!);
      await recorder.completeBackground(rowId, stored);
    }
  }
}
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
    await copyToPostgres(
      ledger,
      store,
      hookSet,
      inputs.map((input) => [undefined, input]),
      reports,
    );

    const pool = store.connection.pool;
    for (const ref of [...reports.map((r) => r.invocationId), 'toolu_2', 'toolu_1', '3']) {
      const onSqlite = JSON.parse(JSON.stringify(explain(ledger, ref)));
      const { origin, ...onPostgres } = JSON.parse(JSON.stringify(await explainPostgres(pool, store.connection.displayUrl, ref)));
      expect(onPostgres, `explain ${ref}`).toEqual(onSqlite);
      // Where the record came from is the central ledger's own: written directly, by this writer.
      expect(origin, `explain ${ref}`).toMatchObject({ kind: 'direct', writer: 'parity' });
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

/** A scenario with several denying hooks, asks, modified inputs, failures and timeouts, sessions, agents, hosts and subagents. */
const varied = defineHooks({
  name: 'varied',
  version: '3',
  hooks: [
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      priority: 10,
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('rm -rf')
          ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf \u001b[31m<b>' }
          : undefined,
    },
    {
      id: 'no-secrets',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 20,
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('.env')
          ? { decision: 'deny', reasonCode: 'policy_violation', message: 'secrets' }
          : undefined,
    },
    {
      id: 'ask-net',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 30,
      run: (inv) => (JSON.stringify(inv.toolInput).includes('curl') ? { decision: 'ask', message: 'network' } : undefined),
    },
    {
      id: 'quote',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 40,
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('cat ')
          ? { decision: 'modify', input: { command: 'cat -- "f"' }, reason: 'quoted' }
          : undefined,
    },
    {
      id: 'flaky',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 50,
      run: (inv) => {
        if (JSON.stringify(inv.toolInput).includes('boom')) throw new Error('flaky hook blew up');
        return undefined;
      },
    },
    {
      id: 'slow',
      point: 'pre_tool_use',
      priority: 60,
      timeoutMs: 40,
      run: async (inv) => {
        if (JSON.stringify(inv.toolInput).includes('slow')) await new Promise((r) => setTimeout(r, 400));
        return undefined;
      },
    },
    { id: 'context', point: 'user_prompt_submit', run: () => ({ additionalContext: 'careful' }) },
    { id: 'audit', point: 'pre_tool_use', mode: 'background', run: () => undefined },
  ],
});

type RunInput = Parameters<ReturnType<typeof createRunner>['run']>[0];

/** [host, input]: three sessions on two hosts, three agents (one a subagent), one event without a session. */
const variedInputs: [string, Record<string, unknown>][] = [
  ['host-a', { point: 'user_prompt_submit', sessionId: 's-a', agent: 'claude-code', prompt: 'tidy up' }],
  [
    'host-a',
    {
      point: 'pre_tool_use',
      sessionId: 's-a',
      agent: 'claude-code',
      toolName: 'Bash',
      toolUseId: 't1',
      toolInput: { command: 'rm -rf /' },
    },
  ],
  ['host-b', { point: 'pre_tool_use', sessionId: 's-b', agent: 'codex', toolName: 'Read', toolUseId: 't2', toolInput: { path: '.env' } }],
  [
    'host-a',
    { point: 'pre_tool_use', sessionId: 's-a', agent: 'claude-code', toolName: 'Bash', toolUseId: 't3', toolInput: { command: 'cat x' } },
  ],
  [
    'host-b',
    { point: 'pre_tool_use', sessionId: 's-b', agent: 'codex', toolName: 'Bash', toolUseId: 't4', toolInput: { command: 'curl x' } },
  ],
  [
    'host-a',
    {
      point: 'pre_tool_use',
      sessionId: 's-c',
      agent: 'claude-code/Explore',
      toolName: 'Bash',
      toolUseId: 't5',
      toolInput: { command: 'boom' },
    },
  ],
  [
    'host-b',
    { point: 'pre_tool_use', sessionId: 's-b', agent: 'codex', toolName: 'Bash', toolUseId: 't6', toolInput: { command: 'slow' } },
  ],
  [
    'host-a',
    {
      point: 'pre_tool_use',
      sessionId: 's-c',
      agent: 'claude-code/Explore',
      toolName: 'Grep',
      toolUseId: 't7',
      toolInput: { path: '.env', rm: 'rm -rf' },
    },
  ],
  ['host-b', { point: 'pre_tool_use', agent: 'gemini-cli', toolName: 'Bash', toolUseId: 't8', toolInput: { command: 'rm -rf ~' } }],
  [
    'host-a',
    { point: 'pre_tool_use', sessionId: 's-a', agent: 'claude-code', toolName: 'Write', toolUseId: 't9', toolInput: { path: '.env' } },
  ],
  [
    'host-b',
    { point: 'pre_tool_use', sessionId: 's-b', agent: 'codex', toolName: 'Bash', toolUseId: 't10', toolInput: { command: 'rm -rf /tmp' } },
  ],
];

/** Runs the real CLI in this process (argv parsing, the engine seam, --json rendering) against `db`. */
async function cli(db: string, argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = { stdout: '', stderr: '' };
  const sink = (key: 'stdout' | 'stderr') =>
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        out[key] += chunk.toString();
        done();
      },
    });
  const code = await main(argv, {
    stdout: sink('stdout'),
    stderr: sink('stderr'),
    stdin: Readable.from([]),
    env: { ...process.env, NO_COLOR: '1', HOOKLEDGER_DB: db },
  });
  return { code, ...out };
}

describe('parity through the CLI: one varied scenario on SQLite and PostgreSQL gives the same --json', { timeout: 180_000 }, () => {
  it('denials (filters, cursor paging, group-by), sessions (list, paging, timelines), explain, verify', async () => {
    // Record on SQLite, each host through its own writer.
    const { ledger, path } = tempLedger();
    const hostLedger = (host: string): RecordingLedger => ({ writer: (options) => ledger.writer({ ...options, host }) });
    const runners = new Map(['host-a', 'host-b'].map((host) => [host, createRunner({ hookSet: varied, ledger: hostLedger(host) })]));
    const reports: Report[] = [];
    for (const [host, input] of variedInputs) reports.push(await runners.get(host)!.run(input as RunInput));
    for (const runner of runners.values()) await runner.close();
    const middle = reports[5]!.startedAt;

    // The same records on PostgreSQL, with the runner's results and times.
    const { url } = await freshDatabase();
    const store = await PostgresStore.open({ url, writerId: 'parity' });
    stores.push(store);
    await copyToPostgres(ledger, store, varied, variedInputs, reports);

    // The scenario exercises what it claims.
    const decisions = reports.map((r) => r.decision);
    expect(decisions.filter((d) => d === 'deny').length).toBeGreaterThanOrEqual(5);
    expect(decisions).toContain('ask');
    expect(reports.some((r) => r.modifiedInput !== null && r.modifiedInput !== undefined)).toBe(true);
    const statuses = reports.flatMap((r) => r.outcomes.map((o) => o.status));
    expect(statuses).toContain('failed');
    expect(statuses).toContain('timed_out');

    const since = new Date(middle).toISOString();
    const queries: string[][] = [
      ['denials'],
      ['denials', '--session', 's-b'],
      ['denials', '--tool', 'Bash'],
      ['denials', '--hook', 'no-secrets'],
      ['denials', '--reason-code', 'safety_violation'],
      ['denials', '--point', 'pre_tool_use'],
      ['denials', '--hook-set', 'varied'],
      ['denials', '--hook-set', reports[0]!.hookSet.fingerprint.slice(0, 8)],
      ['denials', '--agent', 'claude-code'],
      ['denials', '--agent', 'claude-code/Explore'],
      ['denials', '--host', 'host-b'],
      ['denials', '--since', since],
      ['denials', '--until', since],
      ['denials', '--session', 's-a', '--tool', 'Bash', '--since', '2000-01-01'],
      ['denials', '--decision', 'allow'],
      ...DENIAL_GROUPS.map((key) => ['denials', '--group-by', key]),
      ['denials', '--group-by', 'hook', '--host', 'host-a'],
      ['denials', '--group-by', 'reason', '--limit', '1'],
      ['sessions'],
      ['sessions', '--agent', 'codex'],
      ['sessions', '--host', 'host-a', '--since', '2000-01-01'],
      ...['s-a', 's-b', 's-c'].map((s) => ['sessions', s]),
      ['sessions', 's-a', '--tool', 'Bash'],
      ['sessions', 'nobody'],
      ...reports.map((r) => ['explain', String(r.invocationId)]),
      ['explain', 't3'],
    ];
    for (const query of queries) {
      const [onSqlite, onPostgres] = [await cli(path, [...query, '--json']), await cli(url, [...query, '--json'])];
      expect(onPostgres.code, `${query.join(' ')}: ${onPostgres.stderr}`).toBe(onSqlite.code);
      if (onSqlite.code !== 0) {
        expect(onPostgres.stderr.replace(/postgres:\/\/\S+/, 'LEDGER'), query.join(' ')).toBe(onSqlite.stderr.replace(path, 'LEDGER'));
        continue;
      }
      // explain's `origin` (who wrote a central record) is PostgreSQL's own; SQLite has none.
      const { origin, ...answer } = JSON.parse(onPostgres.stdout) as Record<string, unknown>;
      if (query[0] === 'explain') expect(origin, query.join(' ')).toMatchObject({ kind: 'direct', writer: 'parity' });
      expect(answer, query.join(' ')).toEqual(JSON.parse(onSqlite.stdout));
    }

    // Paging through every page with the cursor, on both: the same pages, the same cursors.
    for (const query of [
      ['denials'],
      ['denials', '--tool', 'Bash'],
      ['sessions'],
      ['sessions', '--agent', 'claude-code'],
      ['sessions', 's-b'],
    ]) {
      const pages = async (db: string) => {
        const all: unknown[] = [];
        let cursor: string | null = null;
        do {
          const result = await cli(db, [...query, '--json', '--limit', '1', ...(cursor ? ['--cursor', cursor] : [])]);
          expect(result.code, result.stderr).toBe(0);
          const page = JSON.parse(result.stdout) as { nextCursor: string | null };
          all.push(page);
          cursor = page.nextCursor;
        } while (cursor !== null && all.length < 50);
        return all;
      };
      const onSqlite = await pages(path);
      expect(onSqlite.length, query.join(' ')).toBeGreaterThan(1);
      expect(await pages(url), `${query.join(' ')} paged`).toEqual(onSqlite);
    }

    // verify: the same records and links; what must differ is where the ledger is, how long the
    // walk took, and the chain's shape (one chain on SQLite, one per writer here).
    const [sqliteVerify, postgresVerify] = [await cli(path, ['verify', '--json']), await cli(url, ['verify', '--json'])];
    expect(sqliteVerify.code).toBe(0);
    expect(postgresVerify.code).toBe(0);
    const { location: _l1, path: _p, durationMs: _d1, head, ...sqliteRest } = JSON.parse(sqliteVerify.stdout);
    const { location, durationMs: _d2, writers, ...postgresRest } = JSON.parse(postgresVerify.stdout);
    expect(postgresRest).toEqual(sqliteRest);
    expect(location).not.toContain(new URL(url).password);
    // The head hash covers each link's commit time and order (background completions interleave
    // differently when copied), so only its position is compared; verify proves each chain.
    expect(writers).toMatchObject([{ writer: 'parity', links: sqliteRest.links, head: { seq: head.seq } }]);
  });
});
