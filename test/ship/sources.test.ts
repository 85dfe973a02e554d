import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from '../postgres/support.js';
import { hookledger, HOSTILE_HOST, writeMachine } from './machines.js';

/**
 * Issue 13: the central ledger answers by source and host. Two machines' SQLite ledgers (with
 * the same session ids, and a hostile host name) are shipped into one database; every report
 * with `--source`/`--host` must answer, through the real CLI, exactly what the machine's own
 * ledger answers (central ids mapped back to the source's ids).
 */

/** central id → the source's own id, for one source. */
async function idMap(database: string, source: string): Promise<Map<number, number>> {
  const rows = await adminSql<{ id: string; source_ref: string }>('SELECT id, source_ref FROM invocations WHERE writer_id = $1', database, [
    source,
  ]);
  return new Map(rows.map((r) => [Number(r.id), Number(r.source_ref)]));
}

/**
 * A report's JSON with central invocation ids mapped to the source's ids, and what is central by
 * nature dropped: other ids (hook sets, outcomes: numbered per database), cursors (they carry ids).
 */
function asSource(value: unknown, ids: Map<number, number>, key = ''): unknown {
  if (Array.isArray(value)) return value.map((v) => asSource(v, ids, key));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === 'nextCursor' || k === 'hookSetId' || k === 'origin') continue;
      if (k === 'outcomes' && Array.isArray(v)) {
        out[k] = v.map((o) => asSource(omit(o, 'id', 'invocationId'), ids, k));
        continue;
      }
      out[k] = asSource(v, ids, k);
    }
    if (key === 'hookSet' || key === 'hook_set') delete out.id;
    return out;
  }
  if (typeof value === 'number' && ['id', 'invocationId', 'invocation_id', 'lastInvocationId', 'firstInvocationId'].includes(key)) {
    return ids.get(value) ?? `unmapped ${value}`;
  }
  return value;
}

function omit(o: unknown, ...keys: string[]): unknown {
  if (o === null || typeof o !== 'object') return o;
  return Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));
}

const REPLAY_CONFIG = `module.exports = {
  name: 'stricter',
  version: '2',
  hooks: [
    { id: 'no-echo', point: 'pre_tool_use', capability: 'guardrail',
      run: (inv) => (String(inv.toolInput.command).startsWith('echo') ? { decision: 'deny', message: 'no echo' } : undefined) },
  ],
};
`;

/** What a report answers, comparable across ledgers (see `asSource`); replay: its totals and changes. */
function comparable(command: string, stdout: string, ids: Map<number, number>): unknown {
  if (command === 'export')
    return stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((line) => asSource(JSON.parse(line), ids));
  const json = JSON.parse(stdout) as Record<string, unknown>;
  if (command === 'replay') {
    const run = json.run as { totals: unknown };
    // A replay runs the new hooks now: their own times and durations differ run to run.
    const untimed = JSON.parse(JSON.stringify(json.changes), (k, v: unknown) => (k === 'startedAt' || k === 'durationUs' ? undefined : v));
    return { totals: run.totals, changes: asSource(untimed, ids) };
  }
  if (command === 'hooks') return json.hooks;
  return asSource(json, ids);
}

describe('a central ledger answers by source and host', { timeout: 600_000 }, () => {
  it('denials, sessions, export, hooks and replay with --source/--host give exactly that machine’s records; explain shows the origin', async () => {
    const dir = tempDir();
    const config = join(dir, 'stricter.js');
    writeFileSync(config, REPLAY_CONFIG);
    const machines = [
      { label: 'a', db: join(dir, 'a.db'), hosts: ['laptop-a'], count: 40 },
      { label: 'b', db: join(dir, 'b.db'), hosts: ['runner-b', HOSTILE_HOST], count: 30 },
    ];
    for (const m of machines) await writeMachine(m.db, m.hosts, m.count, m.label);
    const { url, name } = await freshDatabase();

    // One record written to the centre directly (not shipped) first, so central ids differ from every source's.
    const hooksJson = join(dir, 'direct.json');
    writeFileSync(hooksJson, JSON.stringify({ name: 'direct', version: '1', hooks: [] }));
    const direct = await hookledger(
      ['run', '-', '--config', hooksJson, '--db', url, '--json'],
      { HOOKLEDGER_WRITER_ID: 'direct-writer' },
      '{"point":"pre_tool_use","sessionId":"s-1","toolName":"Bash","toolInput":{"command":"rm -rf direct"}}',
    );
    expect(direct.stderr).toBe('');
    expect(direct.code).toBe(0);

    const sources = new Map<string, string>();
    for (const m of machines) {
      const result = await hookledger(['ship', '--db', m.db, '--json'], { HOOKLEDGER_SHIP_TO: url });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      sources.set(m.label, (JSON.parse(result.stdout) as { source: string }).source);
    }
    const identity = { get: (id: number) => id } as Map<number, number>;

    const queries = [
      ['denials'],
      ['denials', '--group-by', 'hook'],
      ['sessions'],
      ['sessions', 's-1'],
      ['export'],
      ['hooks'],
      ['replay', '--config', config],
    ];
    // By host: the reports that differ in how they read (paging, summaries, export, the live health aggregation).
    const hostQueries = queries.filter((q) => q[0] !== 'replay' && q[1] !== '--group-by');
    let compared = 0;
    for (const m of machines) {
      const source = sources.get(m.label)!;
      const ids = await idMap(name, source);
      expect(ids.size).toBe(m.count);
      expect([...ids].some(([central, own]) => central !== own)).toBe(true);
      const selections: [string[], string[]][] = [
        [['--source', source], []],
        ...m.hosts.map((host): [string[], string[]] => [
          ['--host', host],
          ['--host', host],
        ]),
      ];
      for (const [central, local] of selections) {
        for (const query of central[0] === '--source' ? queries : hostQueries) {
          const what = `${query.join(' ')} ${central.join(' ')}`;
          const [there, here] = await Promise.all([
            hookledger([...query, ...central, '--db', url, '--json']),
            hookledger([...query, ...local, '--db', m.db, '--json']),
          ]);
          expect(there.stderr, what).toBe('');
          expect(there.code, what).toBe(0);
          expect(here.code, `${what}: ${here.stderr}`).toBe(0);
          const expected = comparable(query[0]!, here.stdout, identity);
          expect(comparable(query[0]!, there.stdout, ids), what).toEqual(expected);
          // Not vacuous: each report has something in it.
          expect(JSON.stringify(expected).length, what).toBeGreaterThan(60);
          compared++;
        }
      }
      // The same flag on the machine's own SQLite ledger: its own source id is everything, another's nothing.
      const own = await hookledger(['denials', '--source', source, '--db', m.db, '--json']);
      expect(JSON.parse(own.stdout)).toEqual(JSON.parse((await hookledger(['denials', '--db', m.db, '--json'])).stdout));
      const other = sources.get(m.label === 'a' ? 'b' : 'a')!;
      expect(JSON.parse((await hookledger(['denials', '--source', other, '--db', m.db, '--json'])).stdout).rows).toEqual([]);
      expect(JSON.parse((await hookledger(['hooks', '--source', other, '--db', m.db, '--json'])).stdout).hooks).toEqual([]);
    }
    expect(compared).toBe(2 * queries.length + 3 * hostQueries.length); // a: its source and host; b: its source and two hosts

    // explain: where a record came from, as JSON and as text (the hostile host made harmless).
    const [hostile] = await adminSql<{ id: string; source_ref: string }>(
      'SELECT id, source_ref FROM invocations WHERE host = $1 ORDER BY id LIMIT 1',
      name,
      [HOSTILE_HOST],
    );
    const json = JSON.parse((await hookledger(['explain', hostile!.id, '--db', url, '--json'])).stdout);
    expect(json.origin).toEqual({ kind: 'shipped', source: sources.get('b'), host: HOSTILE_HOST, sourceRef: Number(hostile!.source_ref) });
    const text = await hookledger(['explain', hostile!.id, '--db', url]);
    expect(text.code).toBe(0);
    const controls = [...text.stdout].filter((c) => (c < ' ' && c !== '\n') || c === '\u007f');
    expect(controls).toEqual([]);
    const originLine = text.stdout.split('\n').find((l) => l.trimStart().startsWith('origin'))!;
    expect(originLine).toContain(`shipped from source ${sources.get('b')} (host evil`);
    expect(originLine).toContain(`invocation ${hostile!.source_ref} there`);
    expect(text.stdout).not.toMatch(/^host/m); // the host's line break did not start a line of its own
    // By tool_use_id too (each machine's ids are its own, the centre finds them).
    const byToolUse = JSON.parse((await hookledger(['explain', 'toolu_a_3', '--db', url, '--json'])).stdout);
    expect(byToolUse.origin).toEqual({ kind: 'shipped', source: sources.get('a'), host: 'laptop-a', sourceRef: 4 });
    // A record written to the centre directly names its writer.
    const directId = (JSON.parse(direct.stdout) as { invocationId: number }).invocationId;
    const directExplained = JSON.parse((await hookledger(['explain', String(directId), '--db', url, '--json'])).stdout);
    expect(directExplained.origin).toMatchObject({ kind: 'direct', writer: 'direct-writer' });
    expect((await hookledger(['explain', String(directId), '--db', url])).stdout).toContain('written directly by writer direct-writer');
    // The direct record is in no source's selection, but is under its writer's id.
    const byWriter = (await hookledger(['export', '--source', 'direct-writer', '--db', url])).stdout.trim().split('\n');
    expect(byWriter.map((line) => (JSON.parse(line) as { id: number }).id)).toEqual([directId]);
    // A SQLite ledger's explain is unchanged: no origin.
    expect(JSON.parse((await hookledger(['explain', '1', '--db', machines[0]!.db, '--json'])).stdout)).not.toHaveProperty('origin');
  });
});
