import { copyFileSync, readFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { connectPostgres } from '../../src/ledger/postgres/open.js';
import { storedValue } from '../../src/ledger/postgres/text.js';
import { tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from '../postgres/support.js';
import { hookledger, writeMachine } from './machines.js';
import { verifyCentre } from './support.js';

/**
 * Issue 13, security: a machine's role writes only its own source's records. The SQL is the
 * one docs/ship.md prescribes (read from the page, so the documentation cannot drift from what
 * is tested), run on a real server; shipping goes through the real CLI with the password in
 * PGPASSWORD, never in argv.
 */

const docs = readFileSync(join(import.meta.dirname, '../../docs/ship.md'), 'utf8');

/** The SQL block after `<!-- least-privilege: NAME -->` in docs/ship.md, unindented. */
function documentedSql(name: string): string {
  const marker = `<!-- least-privilege: ${name} -->`;
  const at = docs.indexOf(marker);
  expect(at, `docs/ship.md has no "${marker}"`).toBeGreaterThan(0);
  const block = /```sql\n([\s\S]*?)\n\s*```/.exec(docs.slice(at))!;
  return block[1]!.replace(/^ {2}/gm, '');
}

/** Cluster-wide names made unique to this run (roles outlive a test's database). */
function localised(sql: string, suffix: string): string {
  return sql
    .replace(/\bhookledger_ship\b/g, `hookledger_ship_${suffix}`)
    .replace(/\bhookledger_all_rows\b/g, `hookledger_all_rows_${suffix}`);
}

/** Every row of the central tables, as one digest per table: "nothing changed" means these are equal. */
async function centralState(database: string): Promise<Record<string, string>> {
  const tables = [
    'invocations',
    'outcomes',
    'chain',
    'writers',
    'ship_sources',
    'ship_hook_sets',
    'hook_sets',
    'prune_checkpoints',
    'legal_holds',
    'session_summaries',
    'ship_source_roles',
  ];
  const state: Record<string, string> = {};
  for (const table of tables) {
    const [row] = await adminSql<{ digest: string; n: number }>(
      `SELECT md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS digest, count(*)::int AS n FROM ${table} t`,
      database,
    );
    state[table] = `${row!.n} ${row!.digest}`;
  }
  return state;
}

function roleUrl(url: string, role: string): string {
  const u = new URL(url);
  u.username = role;
  u.password = '';
  return u.toString();
}

/** Runs SQL as `role`; the error's code and message when it is refused. */
async function asRole(url: string, role: string, password: string, text: string, values: unknown[] = []) {
  const u = new URL(url);
  const client = new pg.Client({ host: u.hostname, port: Number(u.port), database: u.pathname.slice(1), user: role, password });
  await client.connect();
  try {
    const result = await client.query(text, values);
    return { rowCount: result.rowCount, rows: result.rows as Record<string, unknown>[] };
  } catch (error) {
    const e = error as { code?: string; message: string };
    return { error: `${e.code}: ${e.message}` };
  } finally {
    await client.end();
  }
}

describe('least privilege: a machine’s role writes only its own source', { timeout: 300_000 }, () => {
  it('ships its own source; cannot ship, change or delete another’s (docs/ship.md, Security)', async () => {
    const dir = tempDir();
    const a = join(dir, 'a.db');
    const b = join(dir, 'b.db');
    await writeMachine(a, ['laptop-a'], 20, 'a');
    await writeMachine(b, ['laptop-b'], 15, 'b');
    const { url, name } = await freshDatabase();
    const suffix = randomBytes(4).toString('hex');

    // 1. The owner migrates the schema (any command connecting as the owner), then runs the once SQL.
    await (await connectPostgres({ url })).close();
    await adminSql(localised(documentedSql('once'), suffix), name);
    // 2. Each machine's source id, from its own ledger, connecting nowhere.
    const sourceId = async (db: string) => {
      const out = await hookledger(['ship', '--source-id', '--db', db, '--json']);
      expect(out.code, out.stderr).toBe(0);
      return (JSON.parse(out.stdout) as { source: string }).source;
    };
    const machines = {
      a: { db: a, role: `ship_a_${suffix}`, password: randomBytes(12).toString('hex'), source: await sourceId(a) },
      b: { db: b, role: `ship_b_${suffix}`, password: randomBytes(12).toString('hex'), source: await sourceId(b) },
    };
    expect(await sourceId(a)).toBe(machines.a.source); // stable
    // 3. The owner gives each machine its role, pinned to its source id.
    for (const m of Object.values(machines)) {
      const sql = localised(documentedSql('per machine'), suffix)
        .replace(/\bship_laptop7\b/g, m.role)
        .replace(`'a long random password'`, `'${m.password}'`)
        .replace('DATABASE hookledger', `DATABASE "${name}"`)
        .replace(`'src-…'`, `'${m.source}'`);
      await adminSql(sql, name);
    }
    const shipAs = (m: (typeof machines)['a'], db = m.db) =>
      hookledger(['ship', '--db', db, '--json', '--retry-for', '0'], { HOOKLEDGER_SHIP_TO: roleUrl(url, m.role), PGPASSWORD: m.password });

    // A hold on each ledger: shipped with the records (through hl_ship_holds: the roles have no right on legal_holds).
    for (const [db, session, reason] of [
      [a, 's-1', 'case 42'],
      [b, 's-2', 'case 43'],
    ] as const) {
      const hold = await hookledger(['hold', session, '--reason', reason, '--db', db]);
      expect(hold.code, hold.stderr).toBe(0);
    }

    // (a) Each machine ships its own source with its own role.
    for (const m of Object.values(machines)) {
      const shipped = await shipAs(m);
      expect(shipped.stderr, m.role).toBe('');
      expect(shipped.code, m.role).toBe(0);
      const report = JSON.parse(shipped.stdout) as {
        source: string;
        shipped: { invocations: number; outcomes: number; backgroundCompletions: number; holds: number };
      };
      expect(report.source).toBe(m.source);
      expect(report.shipped.invocations).toBe(m === machines.a ? 20 : 15);
      expect(report.shipped.outcomes).toBeGreaterThan(0);
      expect(report.shipped.backgroundCompletions).toBeGreaterThan(0);
      expect(report.shipped.holds).toBe(1);
      expect(shipped.stdout + shipped.stderr).not.toContain(m.password);
    }
    // A prunes what it shipped (its held session stays), records more; the next ship continues where the centre is
    // (the role reads its own head) and brings the prune checkpoint; what was pruned locally stays central.
    // A hold placed before the prune is applied centrally ahead of the prune's checkpoint: ship applies a run's holds
    // before its first batch, through hl_ship_holds as for the first hold.
    const holdBeforePrune = await hookledger(['hold', 's-0', '--reason', 'case 44', '--db', a]);
    expect(holdBeforePrune.code, holdBeforePrune.stderr).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const pruned = await hookledger(['prune', '--before', new Date().toISOString(), '--db', a, '--json']);
    expect(pruned.code, pruned.stderr).toBe(0);
    await writeMachine(a, ['laptop-a'], 5, 'a2');
    const more = await shipAs(machines.a);
    expect(more.code, more.stderr).toBe(0);
    expect(JSON.parse(more.stdout).shipped).toMatchObject({ invocations: 5, checkpoints: 1, holds: 1 });
    const [counts] = await adminSql<{ a: number; b: number }>(
      'SELECT count(*) FILTER (WHERE writer_id = $1)::int AS a, count(*) FILTER (WHERE writer_id = $2)::int AS b FROM invocations',
      name,
      [machines.a.source, machines.b.source],
    );
    expect(counts).toEqual({ a: 25, b: 15 });
    expect((await verifyCentre(url)).problems).toEqual([]);
    const before = await centralState(name);

    // (b) A copy of B's ledger (B's source id) with new records, shipped with A's role: refused in one line, exit 3, nothing written.
    const forged = join(dir, 'forged.db');
    copyFileSync(b, forged);
    await writeMachine(forged, ['laptop-a'], 5, 'forged');
    const refused = await shipAs(machines.a, forged);
    expect(refused.code).toBe(3);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^hookledger: .*row-level security .*this role may write only its own source's records/);
    expect(refused.stderr).not.toContain(machines.a.password);
    expect(await centralState(name)).toEqual(before);

    // (c) By SQL, A cannot read, change or delete B's rows, nor add to B's chain.
    const { role, password } = machines.a;
    const bSource = machines.b.source;
    const [bInvocation] = await adminSql<{ id: string }>('SELECT min(id) AS id FROM invocations WHERE writer_id = $1', name, [bSource]);
    const attempts: [string, string, unknown[]][] = [
      ['read B', 'SELECT count(*)::int AS n FROM invocations WHERE writer_id = $1', [bSource]],
      ['update B outcomes', `UPDATE outcomes SET message = 'forged' WHERE invocation_id = $1`, [bInvocation!.id]],
      ['rewind B head', 'UPDATE writers SET head_seq = 0 WHERE id = $1', [bSource]],
      ['rename B', `UPDATE ship_sources SET host = 'forged' WHERE id = $1`, [bSource]],
    ];
    for (const [what, text, values] of attempts) {
      const result = await asRole(url, role, password, text, values);
      expect(result.error, what).toBeUndefined();
      if (what === 'read B') expect(result.rows![0], what).toEqual({ n: 0 });
      else expect(result.rowCount, what).toBe(0);
    }
    const refusedSql: [string, string, unknown[]][] = [
      ['update B invocations', `UPDATE invocations SET message = 'forged' WHERE writer_id = $1`, [bSource]],
      ['delete B invocations', 'DELETE FROM invocations WHERE writer_id = $1', [bSource]],
      ['delete B outcomes', 'DELETE FROM outcomes WHERE invocation_id = $1', [bInvocation!.id]],
      ['delete B links', 'DELETE FROM chain WHERE writer_id = $1', [bSource]],
      ['edit B links', `UPDATE chain SET hash = 'x' WHERE writer_id = $1`, [bSource]],
      [
        'append to B chain',
        `INSERT INTO chain (writer_id, seq, kind, ref_id, prev_hash, hash, at, rows) VALUES ($1, 1000, 'invocation', 1, 'x', 'y', 0, '[]')`,
        [bSource],
      ],
      ['claim B', `INSERT INTO ship_source_roles (source_id, role) VALUES ('src-other', current_user)`, []],
      ['edit hook sets', `UPDATE hook_sets SET name = 'forged'`, []],
      ['drop holds', 'DELETE FROM legal_holds', []],
      ['edit session summaries', 'UPDATE session_summaries SET invocations = 0', []],
      ['edit hook set map', 'DELETE FROM ship_hook_sets', []],
      [
        'forge a hook set under a fingerprint nobody shipped',
        `INSERT INTO hook_sets (fingerprint, name, version, strategy, definition_json, created_at) VALUES ($1, 'forged', '1', 'deny_wins', '{"name":"forged","hooks":[]}', 0)`,
        [createHash('sha256').update('{"name":"real","hooks":[]}').digest('hex')],
      ],
    ];
    for (const [what, text, values] of refusedSql) {
      const result = await asRole(url, role, password, text, values);
      expect(result.error, what).toMatch(/^42501: (permission denied|new row violates row-level security)/);
    }
    expect(await centralState(name)).toEqual(before);
    expect((await verifyCentre(url)).problems).toEqual([]);
    // A hook set whose fingerprint is its definition's hash is accepted from the role (shipping adds hook sets
    // that way), also when the definition holds the characters the NUL escape uses.
    const genuine = '{"name":"real \u2400 \u241b","hooks":[]}';
    const stored = storedValue(genuine);
    const added = await asRole(
      url,
      role,
      password,
      `INSERT INTO hook_sets (fingerprint, name, version, strategy, definition_json, created_at) VALUES ($1, 'real', '1', 'deny_wins', $2, 0)`,
      [createHash('sha256').update(genuine).digest('hex'), stored],
    );
    expect(added).toMatchObject({ rowCount: 1 });

    // A role in hookledger_all_rows (an auditor's) reads every source; without it, a non-owner role sees nothing.
    const auditor = { role: `auditor_${suffix}`, password: randomBytes(12).toString('hex') };
    await adminSql(
      `CREATE ROLE ${auditor.role} LOGIN PASSWORD '${auditor.password}'; GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${auditor.role}`,
      name,
    );
    const count = 'SELECT count(*)::int AS n FROM invocations';
    expect((await asRole(url, auditor.role, auditor.password, count)).rows).toEqual([{ n: 0 }]);
    await adminSql(`GRANT hookledger_all_rows_${suffix} TO ${auditor.role}`, name);
    expect((await asRole(url, auditor.role, auditor.password, count)).rows).toEqual([{ n: 40 }]);
    const denials = await hookledger(['denials', '--db', roleUrl(url, auditor.role), '--source', machines.b.source, '--json'], {
      PGPASSWORD: auditor.password,
    });
    expect(denials.code, denials.stderr).toBe(0);
    expect(JSON.parse(denials.stdout).rows.length).toBeGreaterThan(0);

    // Holds: applied at the centre, invisible to a machine's role (its own and the other source's alike).
    expect(await adminSql('SELECT session_id, reason FROM legal_holds ORDER BY session_id', name)).toEqual([
      { session_id: 's-0', reason: 'case 44' },
      { session_id: 's-1', reason: 'case 42' },
      { session_id: 's-2', reason: 'case 43' },
    ]);
    await adminSql('ANALYZE legal_holds', name);
    const hidden: [string, string][] = [
      ['list held sessions', 'SELECT session_id FROM legal_holds'],
      ['count holds', 'SELECT count(*) FROM legal_holds'],
      ['probe a session', `SELECT 1 FROM legal_holds WHERE session_id = 's-2'`],
      ['add a hold directly', `INSERT INTO legal_holds (session_id, reason, held_by, created_at) VALUES ('s-0', 'x', 'x', 0)`],
    ];
    for (const [what, text] of hidden)
      expect((await asRole(url, role, password, text)).error, what).toMatch(/^42501: permission denied for table legal_holds/);
    // Column statistics would show held session ids as most common values: only with SELECT on the table.
    expect((await asRole(url, role, password, `SELECT count(*)::int AS n FROM pg_stats WHERE tablename = 'legal_holds'`)).rows).toEqual([
      { n: 0 },
    ]);
    expect(
      (await adminSql<{ n: number }>(`SELECT count(*)::int AS n FROM pg_stats WHERE tablename = 'legal_holds'`, name))[0]!.n,
    ).toBeGreaterThan(0);
    // The function returns a count, never a row; a role not granted it cannot call it.
    const called = await asRole(url, role, password, `SELECT hl_ship_holds('[]'::jsonb) AS added`);
    expect(called.rows).toEqual([{ added: 0 }]);
    expect((await asRole(url, auditor.role, auditor.password, `SELECT hl_ship_holds('[]'::jsonb)`)).error).toMatch(
      /^42501: permission denied for function hl_ship_holds/,
    );
    expect((await verifyCentre(url)).problems).toEqual([]);
  });
});
