import { afterEach, describe, expect, it } from 'vitest';
import { PostgresServer, freePort } from '../../scripts/postgres-server.js';
import { LedgerError } from '../../src/domain/errors.js';
import { defineHooks } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import type { Report } from '../../src/domain/outcomes.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { verifyPostgres } from '../../src/ledger/postgres/verify.js';
import { createRunner, parseInvocation } from '../../src/runner/runner.js';
import { tempLedger } from '../helpers.js';
import { adminSql, adminUrl, freshDatabase } from './support.js';

const stores: PostgresStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
});

const hookSet = defineHooks({ name: 'faults', version: '1', hooks: [{ id: 'guard', point: 'pre_tool_use', run: () => undefined }] });
const input = { point: 'pre_tool_use', sessionId: 'f1', toolName: 'Bash', toolInput: { command: 'ls' } };

/** A report the real runner produced (on SQLite) for `input`. */
async function aReport(): Promise<Report> {
  const { ledger } = tempLedger();
  const runner = createRunner({ hookSet, ledger });
  const report = await runner.run(input);
  await runner.close();
  return report;
}

async function openError(url: string, options: { connectTimeoutMs?: number } = {}): Promise<LedgerError> {
  const error = await PostgresStore.open({ url, ...options }).then(
    (store) => {
      stores.push(store);
      return null;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(LedgerError);
  const ledgerError = error as LedgerError;
  expect(ledgerError.exitCode).toBe(3);
  expect(ledgerError.message.split('\n')).toHaveLength(1);
  return ledgerError;
}

describe('PostgreSQL faults: one line, exit 3, nothing half-written, no password shown', () => {
  it('connection refused', async () => {
    const port = await freePort();
    const error = await openError(`postgres://app:s3cret-pw@127.0.0.1:${port}/ledger`);
    expect(error.message).toBe(
      `cannot open ledger postgres://app@127.0.0.1:${port}/ledger: connection refused at 127.0.0.1:${port}: is PostgreSQL running and listening there?`,
    );
  });

  it('wrong password', async () => {
    const url = new URL(adminUrl());
    url.password = 'not-the-password-xyz';
    const error = await openError(url.toString());
    expect(error.message).toMatch(
      /^cannot open ledger postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres: password authentication failed for user "postgres" \(check the password in the URL, PGPASSWORD or ~\/\.pgpass\)$/,
    );
    expect(error.message).not.toContain('not-the-password-xyz');
  });

  it('missing database', async () => {
    const url = new URL(adminUrl());
    url.pathname = '/no_such_ledger';
    const error = await openError(url.toString());
    expect(error.message).toMatch(/: database "no_such_ledger" does not exist \(create it first: createdb\)$/);
    expect(error.message).not.toContain(url.password);
  });

  it('a read-only role can open but not write: one line, nothing recorded', async () => {
    const { url, name } = await freshDatabase();
    await (await PostgresStore.open({ url })).close();
    await adminSql(
      `DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'hl_reader') THEN CREATE ROLE hl_reader LOGIN PASSWORD 'reader-pw-123'; END IF; END $$`,
    );
    await adminSql(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO hl_reader`, name);
    const readerUrl = new URL(url);
    readerUrl.username = 'hl_reader';
    readerUrl.password = 'reader-pw-123';
    const store = await PostgresStore.open({ url: readerUrl.toString() });
    stores.push(store);
    const error = await store
      .writer()
      .hookSetId(hookSet)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerError);
    expect((error as LedgerError).exitCode).toBe(3);
    expect((error as LedgerError).message).toMatch(
      /^cannot store the hook set in postgres:\/\/hl_reader@127\.0\.0\.1:\d+\/hl_\w+: permission denied: permission denied for table hook_sets \(a read-only role cannot write the ledger\)$/,
    );
    expect((error as LedgerError).message).not.toContain('reader-pw-123');
    expect(await adminSql(`SELECT (SELECT count(*) FROM hook_sets)::int AS h, (SELECT count(*) FROM invocations)::int AS i`, name)).toEqual(
      [{ h: 0, i: 0 }],
    );
  });

  it('statement timeout: the commit is cancelled whole; the invocation stays running with no outcome or link', async () => {
    const { url, name } = await freshDatabase();
    const store = await PostgresStore.open({ url, writerId: 'slow', statementTimeoutMs: 300 });
    stores.push(store);
    const recorder = store.writer();
    const id = await recorder.begin(await recorder.hookSetId(hookSet), parseInvocation(input) as Invocation, Date.now());
    const report = await aReport();
    // Another session holds this writer's chain head: the commit waits for it past the statement timeout.
    const { default: pg } = await import('pg');
    const blocker = new pg.Client({ connectionString: adminUrl(name) });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT * FROM writers WHERE id = 'slow' FOR UPDATE`);
      const error = await recorder.finish(id, report, report.outcomes).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LedgerError);
      expect((error as LedgerError).message).toMatch(
        /^cannot commit the decision in postgres:\/\/postgres@127\.0\.0\.1:\d+\/hl_\w+: statement timeout: the server cancelled a statement that ran too long \(canceling statement due to statement timeout\)$/,
      );
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect(await adminSql(`SELECT status FROM invocations`, name)).toEqual([{ status: 'running' }]);
    expect(await adminSql(`SELECT (SELECT count(*) FROM outcomes)::int AS o, (SELECT count(*) FROM chain)::int AS c`, name)).toEqual([
      { o: 0, c: 0 },
    ]);
  });

  it('server restarted mid-run: the decision after the restart commits, and the chain verifies', async () => {
    const server = await PostgresServer.start();
    try {
      const url = await server.createDatabase('restart');
      const store = await PostgresStore.open({ url, writerId: 'w' });
      stores.push(store);
      const recorder = store.writer();
      const hookSetId = await recorder.hookSetId(hookSet);
      const report = await aReport();
      const first = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, Date.now());
      await recorder.finish(first, report, report.outcomes);
      const second = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, Date.now());
      const port = server.port;
      await server.stop({ keepData: true });
      // While the server is down: one line, exit 3.
      const down = await recorder.finish(second, report, report.outcomes).catch((e: unknown) => e);
      expect(down).toBeInstanceOf(LedgerError);
      expect((down as LedgerError).message).toMatch(
        /^cannot commit the decision in postgres:\/\/postgres@127\.0\.0\.1:\d+\/restart: (connection refused|the server closed the connection)/,
      );
      await server.launch();
      expect(server.port).toBe(port);
      // The pool replaces its dead connections: the next decision commits.
      const third = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, Date.now());
      await recorder.finish(third, report, report.outcomes);
      const rows = (await server.sql('SELECT id::int, status FROM invocations ORDER BY id', 'restart'))[0]!.rows;
      expect(rows).toEqual([
        { id: first, status: 'completed' },
        { id: second, status: 'running' },
        { id: third, status: 'completed' },
      ]);
      const verified = await verifyPostgres(store.connection.pool, store.connection.displayUrl);
      expect(verified).toMatchObject({ ok: true, links: 2, uncommitted: 1 });
    } finally {
      await server.stop();
    }
  });
});
