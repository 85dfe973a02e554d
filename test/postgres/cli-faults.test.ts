import { createServer, type Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { PostgresServer } from '../../scripts/postgres-server.js';
import { DEFAULT_BACKGROUND_DEADLINE_MS } from '../../src/adapters/claude.js';
import { handlerTimeouts } from '../../src/adapters/claude-timeouts.js';
import { loadHookSet } from '../../src/config/load.js';
import { runCli, type CliResult } from '../cli-helpers.js';
import type { Invocation } from '../../src/domain/invocation.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { parseInvocation } from '../../src/runner/runner.js';
import { concurrentDir, sleep } from '../helpers.js';
import { startServe, stopServe } from './serve-process.js';
import { adminSql, adminUrl, freshDatabase } from './support.js';

/**
 * Faults of a PostgreSQL ledger as a user meets them: through the real CLI, against a real
 * server. Every failure is one line on stderr, exit 3 (or, for `claude`/`serve`, an answer under
 * the error policy), never a stack trace or the password, and nothing half-written.
 */

const dir = concurrentDir();
const config = join(dir, 'hooks.json');
writeFileSync(
  config,
  JSON.stringify({
    name: 'faults',
    version: '1',
    hooks: [{ id: 'guard', point: 'pre_tool_use', capability: 'guardrail', command: { command: 'true' } }],
  }),
);
const invocation = JSON.stringify({ point: 'pre_tool_use', sessionId: 's-1', toolName: 'Bash', toolInput: { command: 'ls' } });
const claudePayload = (id: string) =>
  JSON.stringify({
    session_id: 'faults-1',
    transcript_path: '/tmp/t.jsonl',
    cwd: dir,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: 'ls' },
    tool_use_id: id,
  });

const TOKEN = 'cli-faults-token-0123456789abcdef';

/** One line on stderr, no stack trace, no secret. */
function expectOneLine(result: CliResult, ...secrets: string[]): string {
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(result.stderr).not.toMatch(/\n\s+at |Error: /);
  for (const secret of secrets) {
    expect(result.stderr).not.toContain(secret);
    expect(result.stdout).not.toContain(secret);
  }
  return lines[0]!;
}

async function counts(database: string, sql: (text: string, database: string) => Promise<Record<string, unknown>[]> = adminSql) {
  return (
    await sql(
      `SELECT (SELECT count(*) FROM invocations)::int AS invocations, (SELECT count(*) FROM outcomes)::int AS outcomes,
         (SELECT count(*) FROM chain)::int AS links, (SELECT count(*) FROM legal_holds)::int AS holds,
         (SELECT count(*) FROM prune_checkpoints)::int AS checkpoints`,
      database,
    )
  )[0];
}

/** A one-shot command per kind of access: reads, and writes of each writer path. */
const reads = (db: string) => [
  ['explain', '1', '--db', db],
  ['denials', '--db', db],
  ['sessions', '--db', db],
  ['verify', '--db', db],
  ['hold', '--list', '--db', db],
];
const writes = (db: string) => [
  ['run', '-', '--config', config, '--db', db],
  ['hold', 's-1', '--reason', 'case 9', '--db', db],
  ['prune', '--before', '1d', '--db', db],
];

async function claude(
  db: string,
  id = 'toolu_f',
): Promise<CliResult & { answer: { hookSpecificOutput?: { permissionDecision?: string } } }> {
  const result = await runCli(['claude', '--config', config, '--db', db], { input: claudePayload(id), timeoutMs: 60_000 });
  return { ...result, answer: JSON.parse(result.stdout || '{}') };
}

describe('PostgreSQL faults through the CLI: one line, exit 3, no password, nothing half-written', () => {
  it('wrong password: every command fails in one line without the password; claude denies', async () => {
    const { name } = await freshDatabase();
    const url = new URL(adminUrl(name));
    url.password = 'Wrong-pw-7f3a';
    const db = url.toString();
    for (const args of [...reads(db), ...writes(db)]) {
      const result = await runCli(args, { input: invocation, timeoutMs: 60_000 });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(3);
      expect(expectOneLine(result, 'Wrong-pw-7f3a')).toMatch(/password authentication failed for user "postgres"/);
    }
    const answer = await claude(db);
    expect(answer.code).toBe(0);
    expect(answer.answer.hookSpecificOutput?.permissionDecision).toBe('deny');
    expectOneLine(answer, 'Wrong-pw-7f3a');
  }, 180_000);

  it('missing database: one line naming it', async () => {
    const url = new URL(adminUrl('no_such_ledger_db'));
    const password = url.password;
    const db = url.toString();
    for (const args of [reads(db)[0]!, writes(db)[0]!]) {
      const result = await runCli(args, { input: invocation, timeoutMs: 60_000 });
      expect(result.code, result.stderr).toBe(3);
      expect(expectOneLine(result, password)).toMatch(/database "no_such_ledger_db" does not exist \(create it first: createdb\)$/);
    }
  }, 120_000);

  it('a read-only role: reads work, every write fails with one clear line, nothing is written', async () => {
    const { name, url } = await freshDatabase();
    const seeded = await runCli(['run', '-', '--config', config, '--db', url], { input: invocation, timeoutMs: 60_000 });
    expect(seeded.code, seeded.stderr).toBe(0);
    // A writer on another host that died mid-decision: its lease has run out, so opening the ledger
    // would recover its row, which this role may not do. Reads must still work.
    const ghost = await PostgresStore.open({ url, writerId: 'ghost', leaseMs: 100 });
    const recorder = ghost.writer();
    await recorder.begin(
      await recorder.hookSetId(await loadHookSet(config)),
      parseInvocation(JSON.parse(invocation)) as Invocation,
      Date.now(),
    );
    await ghost.close();
    await sleep(200);
    const role = `hl_ro_${name.slice(3)}`;
    await adminSql(`CREATE ROLE ${role} LOGIN PASSWORD 'Reader-pw-91c'`);
    await adminSql(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`, name);
    const reader = new URL(url);
    reader.username = role;
    reader.password = 'Reader-pw-91c';
    const db = reader.toString();
    const before = await counts(name);

    for (const args of reads(db)) {
      const result = await runCli(args, { timeoutMs: 60_000 });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(0);
      expect(result.stderr + result.stdout).not.toContain('Reader-pw-91c');
    }
    for (const args of writes(db)) {
      const result = await runCli(args, { input: invocation, timeoutMs: 60_000 });
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(3);
      expect(expectOneLine(result, 'Reader-pw-91c')).toMatch(
        /permission denied for table \w+ \(a read-only role cannot write the ledger\)/,
      );
    }
    const answer = await claude(db);
    expect(answer.answer.hookSpecificOutput?.permissionDecision).toBe('deny');
    expectOneLine(answer, 'Reader-pw-91c');
    expect(await counts(name)).toEqual(before);
    // The ghost's row is left for a writer to recover.
    expect(await adminSql(`SELECT status FROM invocations WHERE writer_id = 'ghost'`, name)).toEqual([{ status: 'running' }]);
  }, 240_000);

  it('statement timeout: the statement is cancelled, one line, nothing written', async () => {
    const { name, url } = await freshDatabase();
    expect(
      (await runCli(['run', '-', '--config', config, '--db', url], { input: invocation, env: { HOOKLEDGER_WRITER_ID: 'held' } })).code,
    ).toBe(0);
    const before = await counts(name);
    // Another session holds this writer's row: registering the writer waits for it past the timeout.
    const blocker = new pg.Client({ connectionString: adminUrl(name) });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT * FROM writers WHERE id = 'held' FOR UPDATE`);
      const slow = new URL(url);
      slow.searchParams.set('statement_timeout', '500');
      const result = await runCli(['run', '-', '--config', config, '--db', slow.toString()], {
        input: invocation,
        env: { HOOKLEDGER_WRITER_ID: 'held' },
        timeoutMs: 60_000,
      });
      expect(result.code, result.stderr).toBe(3);
      expect(expectOneLine(result, new URL(url).password)).toMatch(/statement timeout: the server cancelled a statement that ran too long/);
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect(await counts(name)).toEqual(before);
  }, 120_000);

  it('server stopped mid-run, then restarted: serve answers under its error policy with one stderr line meanwhile and records again after; one-shot commands fail in one line', async () => {
    // A server of its own: this test stops it.
    const server = await PostgresServer.start();
    let serve: Awaited<ReturnType<typeof startServe>> | null = null;
    try {
      const db = await server.createDatabase('restart');
      const password = new URL(db).password;
      serve = await startServe(config, db, TOKEN);
      const ask = async (id: string) => {
        const res = await fetch(`${serve!.url}/claude`, {
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}` },
          body: claudePayload(id),
        });
        return { status: res.status, answer: (await res.json()) as { hookSpecificOutput?: { permissionDecision?: string } } };
      };
      expect(await ask('toolu_before')).toEqual({ status: 200, answer: {} });

      await server.stop({ keepData: true });
      const logged = serve.cli.output.stderr.length;
      const down = await ask('toolu_down');
      expect(down.status).toBe(200);
      expect(down.answer.hookSpecificOutput?.permissionDecision).toBe('deny');
      const line = expectOneLine({ code: 0, stdout: '', stderr: serve.cli.output.stderr.slice(logged) }, password);
      expect(line).toMatch(/^hookledger: .*(connection refused|the server closed the connection)/);
      for (const args of [
        ['denials', '--db', db],
        ['run', '-', '--config', config, '--db', db],
      ]) {
        const result = await runCli(args, { input: invocation, timeoutMs: 60_000 });
        expect(result.code, result.stderr).toBe(3);
        expect(expectOneLine(result, password)).toMatch(/connection refused/);
      }
      const oneShot = await claude(db);
      expect(oneShot.answer.hookSpecificOutput?.permissionDecision).toBe('deny');

      await server.launch();
      expect(await ask('toolu_after')).toEqual({ status: 200, answer: {} });
      // Nothing half-written: the decision asked while the server was down was never begun.
      const rows = (await server.sql('SELECT tool_use_id, status FROM invocations ORDER BY id', 'restart'))[0]!.rows;
      expect(rows).toEqual([
        { tool_use_id: 'toolu_before', status: 'completed' },
        { tool_use_id: 'toolu_after', status: 'completed' },
      ]);
      const verified = await runCli(['verify', '--db', db], { timeoutMs: 60_000 });
      expect(verified.code, verified.stderr).toBe(0);
    } finally {
      if (serve) await stopServe(serve);
      await server.stop();
    }
  }, 240_000);

  it('claude on a hung connect (a listener that accepts and never answers) denies within its connect timeout, far inside its handler timeout', async () => {
    const sockets: Socket[] = [];
    const hung = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
    const port = (hung.address() as { port: number }).port;
    // Claude Code's limit for the handler install-claude writes for this hook set.
    const handlerMs =
      handlerTimeouts(await loadHookSet(config), ['PreToolUse'], { backgroundDrainMs: DEFAULT_BACKGROUND_DEADLINE_MS }).timeouts
        .PreToolUse! * 1000;
    try {
      for (const [db, connectMs] of [
        [`postgres://app:Hung-pw-55@127.0.0.1:${port}/ledger`, 5000],
        [`postgres://app:Hung-pw-55@127.0.0.1:${port}/ledger?connect_timeout=2`, 2000],
      ] as const) {
        const started = Date.now();
        const result = await claude(db);
        const elapsed = Date.now() - started;
        expect(result.code).toBe(0);
        expect(result.answer.hookSpecificOutput?.permissionDecision).toBe('deny');
        expect(expectOneLine(result, 'Hung-pw-55')).toMatch(/connection timed out/);
        // It waited for the connect timeout (the listener did accept), then answered: process start-up
        // and config loading on a loaded machine are the rest.
        expect(elapsed).toBeGreaterThanOrEqual(connectMs);
        expect(elapsed).toBeLessThan(connectMs + 20_000);
        expect(elapsed).toBeLessThan(handlerMs);
      }
      expect(sockets.length).toBeGreaterThanOrEqual(2);
    } finally {
      for (const socket of sockets) socket.destroy();
      hung.close();
    }
  }, 120_000);
});
