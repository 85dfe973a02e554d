import type Database from 'better-sqlite3';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { InvocationFilter } from '../../src/ledger/queries/filters.js';
import { groupDenials, listDenials, DENIAL_GROUPS } from '../../src/ledger/queries/denials.js';
import { writeExport } from '../../src/ledger/queries/export.js';
import { hookHealth } from '../../src/ledger/queries/health.js';
import { listSessions, sessionTimeline } from '../../src/ledger/queries/sessions.js';
import type { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { buildLedger } from './fixture.js';

interface Captured {
  sql: string;
  params: unknown[];
}

/**
 * Records every statement the report functions run, with its parameters, by wrapping the
 * connection's `prepare` (the `prepared` cache keeps whatever it returns).
 */
function capture(ledger: SqliteLedger): Captured[] {
  const captured: Captured[] = [];
  const db = ledger.sqlite;
  const original = db.prepare.bind(db);
  const wrap = (statement: Database.Statement, sql: string): Database.Statement =>
    new Proxy(statement, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (prop === 'all' || prop === 'get' || prop === 'iterate' || prop === 'run') captured.push({ sql, params: args });
          const result = (value as (...a: unknown[]) => unknown).apply(target, args);
          return result === target ? wrap(target, sql) : result;
        };
      },
    });
  (db as { prepare: (sql: string) => Database.Statement }).prepare = (sql: string) => wrap(original(sql), sql);
  return captured;
}

/**
 * Plan lines that read a whole table (`SCAN t` without an index), and, for the queries that
 * page or stream in id order, any sort: those must read an index in id order and stop early.
 */
function fullScans(ledger: SqliteLedger, c: Captured): string[] {
  const plan = ledger.sqlite.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...c.params) as { detail: string; parent: number }[];
  const idOrdered = /ORDER BY i\.id( DESC)? LIMIT/.test(c.sql);
  return plan
    .filter(
      (p) =>
        /^SCAN (invocations|outcomes|i|o)\b(?! USING)/.test(p.detail) ||
        (idOrdered && p.parent === 0 && /TEMP B-TREE FOR ORDER BY/.test(p.detail)),
    )
    .map((p) => p.detail);
}

describe('query plans', () => {
  it('no filtered report query scans invocations or outcomes without an index', async () => {
    const { ledger, recorded } = await buildLedger();
    const some = recorded.find((r) => r.report.decision === 'deny')!;
    const filters: InvocationFilter[] = [
      {},
      { sessionId: 's-1' },
      { toolName: 'Bash' },
      { hookId: 'no-rm' },
      { reasonCode: 'policy_violation' },
      { point: 'user_prompt_submit' },
      { hookSet: 'policy' },
      { hookSet: some.hookSet.fingerprint.slice(0, 10) },
      { since: some.report.startedAt },
      { until: some.report.startedAt },
      { since: some.report.startedAt - 10, until: some.report.startedAt + 10 },
      { decision: 'deny' },
      { toolName: 'Bash', sessionId: 's-2', since: 0 },
    ];
    const captured = capture(ledger);
    const sink = new Writable({ write: (_c, _e, done) => done() });
    for (const filter of filters) {
      const { decision, ...denialFilter } = filter;
      const page = listDenials(ledger, denialFilter, { limit: 5 });
      if (page.nextCursor) listDenials(ledger, denialFilter, { limit: 5, cursor: page.nextCursor });
      for (const by of DENIAL_GROUPS) groupDenials(ledger, denialFilter, by);
      const sessions = listSessions(ledger, filter, { limit: 2 });
      if (sessions.nextCursor) listSessions(ledger, filter, { limit: 2, cursor: sessions.nextCursor });
      if (decision === undefined) sessionTimeline(ledger, 's-1', { limit: 5 }, { ...filter, sessionId: undefined });
      await writeExport(ledger, filter, sink);
    }
    hookHealth(ledger, { since: 0, until: Date.now() + 1000 });
    hookHealth(ledger, { since: 0, until: Date.now() + 1000, hookId: 'no-rm' });

    const reads = captured.filter((c) => /\b(invocations|outcomes)\b/.test(c.sql));
    expect(reads.length).toBeGreaterThan(50);
    const offenders = new Map<string, string[]>();
    for (const c of reads) {
      const scans = fullScans(ledger, c);
      if (scans.length > 0) offenders.set(c.sql.replace(/\s+/g, ' '), scans);
    }
    expect(Object.fromEntries(offenders)).toEqual({});
    // The check itself catches a full scan, and a sort under an id-ordered page.
    expect(fullScans(ledger, { sql: 'SELECT * FROM invocations i WHERE i.message = ?', params: ['x'] })).toEqual(['SCAN i']);
    expect(
      fullScans(ledger, { sql: 'SELECT * FROM invocations i WHERE i.tool_name IN (?, ?) ORDER BY i.id LIMIT 5', params: ['Bash', 'Read'] }),
    ).toEqual(['USE TEMP B-TREE FOR ORDER BY']);
    if (process.env.HOOKLEDGER_PRINT_PLANS) {
      for (const c of new Map(reads.map((r) => [r.sql, r])).values()) {
        const plan = ledger.sqlite.prepare(`EXPLAIN QUERY PLAN ${c.sql}`).all(...c.params) as { detail: string }[];
        console.log(`${c.sql.replace(/\s+/g, ' ').slice(0, 160)}\n   ${plan.map((p) => p.detail).join('\n   ')}`);
      }
    }
  });
});
