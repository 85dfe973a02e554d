import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { deny } from '../../src/domain/results.js';
import Database from 'better-sqlite3';
import { copyFieldSql, copyIn, copyLine, copyLineSql } from '../../src/ledger/postgres/copy.js';
import { storedValue } from '../../src/ledger/postgres/text.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { createRunner } from '../../src/runner/runner.js';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { adminSql, adminUrl, freshDatabase } from '../postgres/support.js';
import { verifyCentre } from './support.js';

/** Text an agent or hook may send: every character COPY's text format treats specially, and more. */
const HOSTILE = [
  `it's "quoted" and 'single'`,
  'back\\slash \\N \\. \\\\ end\\',
  'tab\there\tand\ttrailing\t',
  'line\nbreak\r\ncarriage\rreturn\n',
  '\\.\n\\.',
  'unicode: héllo ✓ 日本語 🦀 \u200b\u202e',
  'nul\u0000inside',
  'lone \ud800 surrogate',
  '',
  '\\N',
  'comma, "csv"; =cmd|" /C calc"!A0',
];

describe('COPY text format (ship-sink.ts, copy.ts)', { timeout: 120_000 }, () => {
  it('copies hostile text verbatim, except NUL (U+2400) and a lone surrogate (U+FFFD×3), as the PostgreSQL ledger stores them', async () => {
    const { name } = await freshDatabase();
    await adminSql('CREATE TABLE t (n int, body text, flag boolean, big bigint)', name);
    const client = new pg.Client({ connectionString: adminUrl(name) });
    await client.connect();
    try {
      const rows = HOSTILE.map((body, n) => [n, body, n % 2 === 0 ? 1 : false, n === 0 ? null : 2 ** 53 - n]);
      expect(await copyIn(client, 't', ['n', 'body', 'flag', 'big'], rows.map(copyLine).join(''))).toBe(HOSTILE.length);
      const back = (await client.query<{ n: number; body: string; flag: boolean; big: string | null }>('SELECT * FROM t ORDER BY n')).rows;
      expect(back.map((r) => r.body)).toEqual(HOSTILE.map((t) => t.replace('\u0000', '\u2400').replace('\ud800', '\ufffd\ufffd\ufffd')));
      expect(back.map((r) => r.flag)).toEqual(HOSTILE.map((_, n) => n % 2 === 0));
      expect(back.map((r) => r.big)).toEqual(HOSTILE.map((_, n) => (n === 0 ? null : String(2 ** 53 - n))));
      // A bad row fails the whole COPY with the server's error, and the connection stays usable.
      await expect(copyIn(client, 't', ['n'], 'not-a-number\n')).rejects.toThrow(/invalid input syntax for type integer/);
      expect((await client.query('SELECT count(*)::int AS n FROM t')).rows[0].n).toBe(HOSTILE.length);
    } finally {
      await client.end();
    }
  });

  it('COPY text SQLite builds (copyFieldSql, copyLineSql, then storedValue on the line: the ship path) is what copyLine writes, for hostile text', () => {
    const db = new Database(':memory:');
    try {
      db.exec('CREATE TABLE t (n integer, body text, other text, flag integer)');
      const insert = db.prepare('INSERT INTO t VALUES (?, ?, ?, ?)');
      const texts = [...HOSTILE, 'nul at end\u0000', '\u0000', 'symbols \u2400 \u241b\u2400 \u241b\u241b', '\t\\N\t', null];
      for (const [n, body] of texts.entries()) insert.run(n === 3 ? null : 2 ** 53 - n, body, texts[texts.length - 2 - n], n % 2);
      const fields = copyLineSql([
        copyFieldSql('n', 'integer'),
        copyFieldSql('body', 'text'),
        copyFieldSql('other', 'text'),
        copyFieldSql('flag', 'integer'),
      ]);
      const fromSql = db
        .prepare(`SELECT ${fields} || char(10) FROM t ORDER BY rowid`)
        .pluck()
        .all()
        .map((line) => storedValue(line as string));
      const fromJs = db
        .prepare('SELECT * FROM t ORDER BY rowid')
        .raw()
        .all()
        .map((row) => copyLine(row as unknown[]));
      expect(fromSql).toEqual(fromJs);
      expect(fromSql.join('')).toContain('\\t\\\\N\\t');
    } finally {
      db.close();
    }
  });

  it('ship: hostile prompts, tool inputs and hook messages arrive as the source holds them; both ends verify', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    const ledger = SqliteLedger.open({ path: db });
    const runner = createRunner({
      ledger,
      hookSet: defineHooks({
        name: 'hostile',
        hooks: [
          { id: 'echo', point: 'pre_tool_use', capability: 'guardrail', run: (inv) => deny(String((inv.toolInput as { s: string }).s)) },
        ],
      }),
    });
    const clean = HOSTILE.filter((t) => !t.includes('\u0000') && !t.includes('\ud800'));
    for (const [i, s] of clean.entries())
      await runner.run({ point: 'pre_tool_use', sessionId: `s\t${i}\n`, toolName: 'Bash', toolInput: { s } });
    await runner.close();
    const local = ledger.sqlite.prepare('SELECT id, session_id, invocation_json, message FROM invocations ORDER BY id').all();
    const localMessages = ledger.sqlite.prepare(`SELECT message FROM outcomes WHERE hook_id = 'echo' ORDER BY id`).all();
    expect(localMessages.map((m) => (m as { message: string }).message)).toContain(clean[1]);
    ledger.close();

    const { url, name } = await freshDatabase();
    const shipped = await runCli(['ship', '--db', db, '--json'], { timeoutMs: 60_000, env: { HOOKLEDGER_SHIP_TO: url } });
    expect(shipped.code, shipped.stderr).toBe(0);
    const central = await adminSql(
      'SELECT source_ref::int AS id, session_id, invocation_json, message FROM invocations ORDER BY source_ref',
      name,
    );
    expect(central).toEqual(local);
    const messages = await adminSql<{ message: string }>(`SELECT message FROM outcomes WHERE hook_id = 'echo' ORDER BY source_ref`, name);
    expect(messages).toEqual(localMessages);
    expect((await verifyCentre(url)).problems).toEqual([]);
  });
});
