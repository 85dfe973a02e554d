import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { allow, deny, modify } from '../../src/domain/results.js';
import {
  linkHash,
  invocationEntry,
  INVOCATION_SELECT,
  OUTCOME_SELECT,
  outcomeEntry,
  OUTCOMES_OF_INVOCATION_SELECT,
  parseRowsText,
  type RawRow,
} from '../../src/ledger/integrity.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { LedgerWriter } from '../../src/ledger/write.js';
import { runCli } from '../cli-helpers.js';
import { bash, setup, tempDir } from '../helpers.js';

const writerScript = join(import.meta.dirname, '../fixtures/scripts/chain-writer.ts');

/** A ledger with a few committed invocations of every shape: allow, deny (background skipped), modify, background completed. */
async function populated() {
  const ctx = setup([
    {
      id: 'rewrite',
      point: 'pre_tool_use',
      priority: 1,
      capability: 'guardrail',
      run: (inv) => ((inv.toolInput as { command: string }).command === 'ls' ? modify({ command: 'ls -a' }) : undefined),
    },
    { id: 'ok', point: 'pre_tool_use', priority: 2, capability: 'guardrail', run: () => allow() },
    {
      id: 'block',
      point: 'pre_tool_use',
      priority: 3,
      capability: 'guardrail',
      run: (inv) =>
        (inv.toolInput as { command: string }).command.startsWith('rm') ? deny('no rm', 'safety_violation', { rule: 1 }) : undefined,
    },
    { id: 'audit', point: 'pre_tool_use', mode: 'background', run: () => ({ additionalContext: 'logged' }) },
  ]);
  const ids: number[] = [];
  for (const command of ['ls', 'rm -rf /', 'echo hi', 'cat x'])
    ids.push((await ctx.runner.run({ ...bash(command), sessionId: 's-1' })).invocationId);
  await ctx.runner.close();
  return { ...ctx, ids };
}

/** An outside editor: a second connection, as `sqlite3 ledger.db` would be (foreign keys off, its default). */
function tamper(path: string, sql: string, ...params: unknown[]): void {
  const db = new Database(path);
  try {
    db.prepare(sql).run(...params);
  } finally {
    db.close();
  }
}

function verify(ledger: SqliteLedger) {
  return verifyLedger(ledger);
}

describe('the tamper-evidence chain', () => {
  it('links every committed invocation and completed background outcome, and verifies', async () => {
    const { ledger, ids } = await populated();
    const report = verify(ledger);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    // 4 invocations; the denied one's background hook was skipped at commit, the other 3 completed later.
    expect(report.records).toEqual({ invocations: 4, backgroundOutcomes: 3, checkpoints: 0 });
    expect(report.links).toBe(7);
    const kinds = ledger.sqlite.prepare('SELECT kind, ref_id FROM chain ORDER BY seq').all() as { kind: string; ref_id: number }[];
    expect(kinds.filter((k) => k.kind === 'invocation').map((k) => k.ref_id)).toEqual(ids);
  });

  it('a link covers the invocation row and every outcome row as stored', async () => {
    const { ledger, ids } = await populated();
    const link = ledger.sqlite.prepare(`SELECT * FROM chain WHERE kind = 'invocation' AND ref_id = ?`).get(ids[1]) as {
      seq: number;
      prev_hash: string;
      hash: string;
      at: number;
      rows: string;
    };
    const inv = ledger.sqlite.prepare(INVOCATION_SELECT).raw().get(ids[1]) as RawRow;
    const outcomes = ledger.sqlite.prepare(OUTCOMES_OF_INVOCATION_SELECT).raw().all(ids[1]) as RawRow[];
    expect(outcomes).toHaveLength(4);
    const stored = parseRowsText(link.rows);
    const entries = [invocationEntry(inv), ...outcomes.map((o) => outcomeEntry(o, stored.get(`o${o[0] as number}`)?.pending ?? false))];
    expect(linkHash(link.prev_hash, link.seq, 'invocation', ids[1]!, link.at, entries)).toBe(link.hash);
  });

  it('UPDATE of a decision: verify names the invocation as changed', async () => {
    const { ledger, path, ids } = await populated();
    tamper(path, `UPDATE invocations SET decision = 'allow', reason_code = NULL WHERE id = ?`, ids[1]);
    const report = verify(ledger);
    expect(report.ok).toBe(false);
    expect(report.problems[0]).toMatchObject({ kind: 'changed', table: 'invocations', id: ids[1] });
    expect(report.problemCount).toBe(1);
  });

  it('UPDATE of an outcome: verify names the outcome', async () => {
    const { ledger, path, ids } = await populated();
    const outcome = ledger.sqlite
      .prepare(`SELECT id FROM outcomes WHERE invocation_id = ? AND hook_id = 'block'`)
      .pluck()
      .get(ids[1]) as number;
    tamper(path, `UPDATE outcomes SET message = 'harmless' WHERE id = ?`, outcome);
    expect(verify(ledger).problems).toEqual([expect.objectContaining({ kind: 'changed', table: 'outcomes', id: outcome })]);
  });

  it('UPDATE of a completed background outcome: verify names it', async () => {
    const { ledger, path, ids } = await populated();
    const outcome = ledger.sqlite
      .prepare(`SELECT id FROM outcomes WHERE invocation_id = ? AND hook_id = 'audit'`)
      .pluck()
      .get(ids[0]) as number;
    tamper(path, `UPDATE outcomes SET status = 'failed' WHERE id = ?`, outcome);
    expect(verify(ledger).problems[0]).toMatchObject({ kind: 'changed', table: 'outcomes', id: outcome });
  });

  it('a value changed in type only (text to blob) is named, and so is text SQLite measures differently (astral, NUL)', async () => {
    // verify hashes most links from text SQLite builds; it must not accept what the JavaScript encoding rejects.
    const { ledger, path, ids } = await populated();
    tamper(path, 'UPDATE invocations SET tool_name = CAST(tool_name AS BLOB) WHERE id = ?', ids[0]);
    tamper(path, 'UPDATE outcomes SET hook_id = CAST(hook_id AS BLOB) WHERE invocation_id = ? AND hook_id = ?', ids[2], 'ok');
    tamper(path, 'UPDATE invocations SET message = ? WHERE id = ?', 'a \u{1f600} and a \u0000', ids[3]);
    const report = verify(ledger);
    expect(report.problems.map((p) => [p.kind, p.table])).toEqual([
      ['changed', 'invocations'],
      ['changed', 'outcomes'],
      ['changed', 'invocations'],
    ]);
    expect(report.problems.map((p) => p.id)).toEqual([ids[0], expect.any(Number), ids[3]]);
  });

  it('a value of another type than its column declares, or one filled into a run of NULL columns, is named', async () => {
    // The SQL that builds most links' text writes each value by its declared type and tests runs of NULL columns at once.
    const { ledger, path, ids } = await populated();
    const outcomeOf = (invocation: number, hook: string) =>
      ledger.sqlite.prepare('SELECT id FROM outcomes WHERE invocation_id = ? AND hook_id = ?').pluck().get(invocation, hook) as number;
    const blobInInteger = outcomeOf(ids[0]!, 'ok');
    const realInInteger = outcomeOf(ids[1]!, 'ok');
    const filledRun = outcomeOf(ids[2]!, 'ok');
    // The same digits as a blob: SQLite's text of it is the same bytes.
    tamper(path, `UPDATE outcomes SET priority = CAST(priority AS BLOB) WHERE id = ?`, blobInInteger);
    tamper(path, `UPDATE outcomes SET timeout_ms = 5000.5 WHERE id = ?`, realInInteger);
    tamper(path, `UPDATE outcomes SET failure_detail = '' WHERE id = ?`, filledRun);
    tamper(path, `UPDATE invocations SET turn = 'x' WHERE id = ?`, ids[3]);
    // Enumerated columns: the same bytes as a blob, and a value outside the enumeration.
    const blobInEnum = outcomeOf(ids[0]!, 'rewrite');
    const unknownValue = outcomeOf(ids[2]!, 'block');
    tamper(path, `UPDATE outcomes SET mode = CAST(mode AS BLOB) WHERE id = ?`, blobInEnum);
    tamper(path, `UPDATE outcomes SET status = 'Completed' WHERE id = ?`, unknownValue);
    const report = verify(ledger);
    expect(report.problems.map((p) => [p.kind, p.table, p.id])).toEqual([
      ['changed', 'outcomes', blobInEnum],
      ['changed', 'outcomes', blobInInteger],
      ['changed', 'outcomes', realInInteger],
      ['changed', 'outcomes', filledRun],
      ['changed', 'outcomes', unknownValue],
      ['changed', 'invocations', ids[3]],
    ]);
    expect(report.problemCount).toBe(6);
  });

  it('DELETE of an outcome: verify names it as removed', async () => {
    const { ledger, path, ids } = await populated();
    const outcome = ledger.sqlite
      .prepare(`SELECT id FROM outcomes WHERE invocation_id = ? AND hook_id = 'ok'`)
      .pluck()
      .get(ids[2]) as number;
    tamper(path, 'DELETE FROM outcomes WHERE id = ?', outcome);
    expect(verify(ledger).problems).toEqual([expect.objectContaining({ kind: 'removed', table: 'outcomes', id: outcome })]);
  });

  it('INSERT of an outcome into a committed invocation: verify names it as inserted', async () => {
    const { ledger, path, ids } = await populated();
    tamper(
      path,
      `INSERT INTO outcomes (invocation_id, hook_id, point, priority, registration_index, mode, capability, runtime, status, decisive, timeout_ms)
       VALUES (?, 'ghost', 'pre_tool_use', 1, 9, 'foreground', 'guardrail', 'in_process', 'completed', 0, 5000)`,
      ids[0],
    );
    const inserted = ledger.sqlite.prepare(`SELECT id FROM outcomes WHERE hook_id = 'ghost'`).pluck().get() as number;
    expect(verify(ledger).problems).toEqual([expect.objectContaining({ kind: 'inserted', table: 'outcomes', id: inserted })]);
  });

  it('INSERT of a fake invocation: verify names it as inserted', async () => {
    const { ledger, path } = await populated();
    tamper(
      path,
      `INSERT INTO invocations (hook_set_id, point, invocation_json, status, decision, started_at, pid, host)
       VALUES (1, 'pre_tool_use', '{}', 'completed', 'allow', 1, 1, 'h')`,
    );
    const fake = ledger.sqlite.prepare('SELECT max(id) FROM invocations').pluck().get() as number;
    const report = verify(ledger);
    expect(report.problems).toEqual([expect.objectContaining({ kind: 'inserted', table: 'invocations', id: fake, seq: null })]);
  });

  it('rows no link covers are found, also when the counts the walk keeps would match (a duplicated link, the unique index dropped)', async () => {
    const { ledger, path, ids } = await populated();
    const outside = new Database(path);
    outside.pragma('foreign_keys = OFF');
    outside.exec(
      `INSERT INTO outcomes (invocation_id, hook_id, point, priority, registration_index, mode, capability, runtime, status, decisive, timeout_ms)
       VALUES (99999, 'stray', 'pre_tool_use', 1, 9, 'foreground', 'guardrail', 'in_process', 'completed', 0, 5000)`,
    );
    outside.close();
    const stray = ledger.sqlite.prepare(`SELECT id FROM outcomes WHERE hook_id = 'stray'`).pluck().get() as number;
    expect(verify(ledger).problems).toEqual([expect.objectContaining({ kind: 'inserted', table: 'outcomes', id: stray })]);
    tamper(path, 'DELETE FROM outcomes WHERE id = ?', stray);

    // One invocation more than links, and one link more (a second link to a linked invocation): equal counts.
    tamper(path, 'DROP INDEX chain_ref');
    tamper(
      path,
      `INSERT INTO chain SELECT (SELECT max(seq) + 1 FROM chain), kind, ref_id, prev_hash, hash, at, rows FROM chain WHERE ref_id = ?`,
      ids[0],
    );
    tamper(
      path,
      `INSERT INTO invocations (hook_set_id, point, invocation_json, status, decision, started_at, pid, host)
       VALUES (1, 'pre_tool_use', '{}', 'completed', 'allow', 1, 1, 'h')`,
    );
    const fake = ledger.sqlite.prepare('SELECT max(id) FROM invocations').pluck().get() as number;
    expect(verify(ledger).problems).toContainEqual(
      expect.objectContaining({ kind: 'inserted', table: 'invocations', id: fake, seq: null }),
    );
  });

  it('DELETE of an invocation (with or without its outcomes): verify names it as removed', async () => {
    const { ledger, path, ids } = await populated();
    tamper(path, 'DELETE FROM invocations WHERE id = ?', ids[3]);
    const report = verify(ledger);
    expect(report.problems[0]).toMatchObject({ kind: 'removed', table: 'invocations', id: ids[3] });
    // The orphaned outcomes (foreign keys are off in a plain sqlite3 shell) are not reported again as inserted.
    expect(report.problems.filter((p) => p.kind === 'inserted')).toEqual([]);
  });

  it('DELETE of an invocation together with its chain link: verify sees the gap', async () => {
    const { ledger, path, ids } = await populated();
    const seq = ledger.sqlite.prepare(`SELECT seq FROM chain WHERE kind = 'invocation' AND ref_id = ?`).pluck().get(ids[1]) as number;
    tamper(path, 'DELETE FROM outcomes WHERE invocation_id = ?', ids[1]);
    tamper(path, 'DELETE FROM invocations WHERE id = ?', ids[1]);
    tamper(path, 'DELETE FROM chain WHERE seq = ?', seq);
    expect(verify(ledger).problems[0]).toMatchObject({ kind: 'removed', table: 'chain', id: seq });
  });

  it('an edit whose link hash was recomputed is caught by the next link', async () => {
    const { ledger, path, ids } = await populated();
    tamper(path, `UPDATE invocations SET decision = 'allow' WHERE id = ?`, ids[1]);
    // Recompute the edited invocation's link the way hookledger would.
    const link = ledger.sqlite.prepare(`SELECT * FROM chain WHERE kind = 'invocation' AND ref_id = ?`).get(ids[1]) as {
      seq: number;
      prev_hash: string;
      at: number;
      rows: string;
    };
    const inv = ledger.sqlite.prepare(INVOCATION_SELECT).raw().get(ids[1]) as RawRow;
    const outcomes = ledger.sqlite.prepare(OUTCOMES_OF_INVOCATION_SELECT).raw().all(ids[1]) as RawRow[];
    const stored = parseRowsText(link.rows);
    const entries = [invocationEntry(inv), ...outcomes.map((o) => outcomeEntry(o, stored.get(`o${o[0] as number}`)?.pending ?? false))];
    tamper(
      path,
      'UPDATE chain SET hash = ? WHERE seq = ?',
      linkHash(link.prev_hash, link.seq, 'invocation', ids[1]!, link.at, entries),
      link.seq,
    );
    expect(verify(ledger).problems).toEqual([
      expect.objectContaining({ kind: 'changed', table: 'invocations', id: ids[1], seq: link.seq }),
    ]);
  });

  it('a background outcome pending at commit may stay pending, but may not gain a result without its link', async () => {
    const { ledger, path } = await setupPendingBackground();
    expect(verify(ledger).ok).toBe(true);
    const outcome = ledger.sqlite.prepare(`SELECT id FROM outcomes WHERE status = 'pending'`).pluck().get() as number;
    tamper(path, `UPDATE outcomes SET status = 'completed', decision = 'allow' WHERE id = ?`, outcome);
    expect(verify(ledger).problems).toEqual([expect.objectContaining({ kind: 'changed', table: 'outcomes', id: outcome })]);
  });

  it('an invocation whose decision was never committed (a crash) is not a problem', () => {
    const { ledger } = setup([]);
    const writer = new LedgerWriter(ledger);
    const hookSetId = ledger.sqlite.prepare('SELECT id FROM hook_sets').pluck().get() as number;
    writer.begin(
      hookSetId,
      {
        point: 'stop',
        eventName: null,
        sessionId: null,
        turn: null,
        toolName: null,
        toolUseId: null,
        toolInput: null,
        toolResponse: null,
        prompt: null,
        error: null,
        agent: null,
        cwd: null,
        meta: {},
        raw: null,
      },
      Date.now(),
    );
    const report = verify(ledger);
    expect(report).toMatchObject({ ok: true, uncommitted: 1, links: 0 });
  });

  it('values SQLite normalises on the way in (lone surrogates, NUL, floats) still verify', async () => {
    const { runner, ledger } = setup([
      {
        id: 'odd',
        point: 'pre_tool_use',
        capability: 'guardrail',
        run: () => deny('bad \ud800 half a pair \u0000 and a NUL', 'policy_violation', { s: '\udfff' }),
      },
    ]);
    await runner.run({
      point: 'pre_tool_use',
      sessionId: 'sess-\ud83d',
      toolName: 'T\udc00',
      cwd: '/tmp/\u0000x',
      toolInput: { k: '\ud800' },
      meta: { f: 0.1 + 0.2 },
    });
    const writer = new LedgerWriter(ledger);
    const hookSetId = ledger.sqlite.prepare('SELECT id FROM hook_sets').pluck().get() as number;
    const inv = {
      point: 'stop' as const,
      eventName: null,
      sessionId: null,
      turn: 2,
      toolName: null,
      toolUseId: null,
      toolInput: null,
      toolResponse: null,
      prompt: null,
      error: null,
      agent: null,
      cwd: null,
      meta: {},
      raw: null,
    };
    const id = writer.begin(hookSetId, inv, 1.5);
    writer.finish(
      id,
      {
        decision: 'none',
        decisiveHookId: null,
        reasonCode: null,
        message: null,
        modifiedInput: null,
        additionalContext: [],
        durationUs: 12.75,
      },
      [],
    );
    const report = verify(ledger);
    expect(report.problems).toEqual([]);
    expect(report.records.invocations).toBe(2);
  });

  it('a changed hook set definition is caught', async () => {
    const { ledger, path } = await populated();
    tamper(path, `UPDATE hook_sets SET definition_json = replace(definition_json, 'no rm', 'fine')`);
    expect(verify(ledger).problems[0]).toMatchObject({ kind: 'changed', table: 'hook_sets' });
  });

  it('several writer processes on one ledger file produce one valid chain', async () => {
    const path = join(tempDir(), 'multi.db');
    SqliteLedger.open({ path }).close();
    const processes = 4;
    const each = 40;
    setTimeout(() => writeFileSync(`${path}.go`, ''), 300);
    await Promise.all(
      Array.from(
        { length: processes },
        (_, i) =>
          new Promise<void>((resolve, reject) => {
            const child = spawn(process.execPath, ['--import', 'tsx', writerScript, path, String(each), `w${i}`], {
              stdio: ['ignore', 'pipe', 'pipe'],
            });
            let err = '';
            child.stderr.on('data', (c: Buffer) => (err += c.toString()));
            child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`writer ${i} exited ${code}: ${err}`))));
          }),
      ),
    );
    const ledger = SqliteLedger.open({ path });
    try {
      const report = verifyLedger(ledger);
      expect(report.problems).toEqual([]);
      const denied = processes * (each / 5);
      expect(report.records).toEqual({ invocations: processes * each, backgroundOutcomes: processes * each - denied, checkpoints: 0 });
      // One chain holds every process's links.
      const pids = ledger.sqlite
        .prepare(`SELECT i.pid FROM chain c JOIN invocations i ON i.id = c.ref_id WHERE c.kind = 'invocation' ORDER BY c.seq`)
        .pluck()
        .all() as number[];
      expect(new Set(pids).size).toBe(processes);
    } finally {
      ledger.close();
    }
  }, 60_000);
});

describe('hookledger verify', () => {
  it('exits 0 with --json on an intact ledger, 5 naming the record after an edit', async () => {
    const { path, ids } = await populated();
    const ok = await runCli(['verify', '--db', path, '--json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, links: 7, problems: [] });
    tamper(path, `UPDATE invocations SET decision = 'allow' WHERE id = ?`, ids[1]);
    const bad = await runCli(['verify', '--db', path, '--json']);
    expect(bad.code).toBe(5);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false, problems: [{ kind: 'changed', table: 'invocations', id: ids[1] }] });
    expect(bad.stderr).toMatch(new RegExp(`integrity check failed .*changed invocations #${ids[1]}`));
    const text = await runCli(['verify', '--db', path]);
    expect(text.code).toBe(5);
    expect(text.stdout).toContain('ledger NOT intact');
    expect(text.stdout.split('\n').every((l) => l.length <= 80)).toBe(true);
  });

  it('--anchor writes the head, then catches a chain rebuilt from scratch', async () => {
    const { path, ledger, ids } = await populated();
    const anchor = join(tempDir(), 'head.json');
    const first = await runCli(['verify', '--db', path, '--anchor', anchor, '--json']);
    expect(first.code).toBe(0);
    expect(existsSync(anchor)).toBe(true);
    const written = JSON.parse(readFileSync(anchor, 'utf8')) as { seq: number; hash: string };
    expect(written.seq).toBe(7);
    expect((await runCli(['verify', '--db', path, '--anchor', anchor])).code).toBe(0);

    // An attacker who edits a record and rewrites every link after it passes a plain verify...
    tamper(path, `UPDATE invocations SET decision = 'allow' WHERE id = ?`, ids[1]);
    rebuildChain(ledger);
    expect(verifyLedger(ledger).ok).toBe(true);
    // ...but not the anchor kept outside the database.
    const caught = await runCli(['verify', '--db', path, '--anchor', anchor, '--json']);
    expect(caught.code).toBe(5);
    expect(JSON.parse(caught.stdout)).toMatchObject({ anchor: { seq: 7, status: 'mismatch' } });
    expect(JSON.parse(readFileSync(anchor, 'utf8'))).toMatchObject({ seq: 7, hash: written.hash });
  });
});

/** What a careful attacker would do: recompute every link from the current rows. */
function rebuildChain(ledger: SqliteLedger): void {
  const links = ledger.sqlite.prepare('SELECT * FROM chain ORDER BY seq').all() as {
    seq: number;
    kind: string;
    ref_id: number;
    at: number;
    rows: string;
  }[];
  let prev = '0'.repeat(64);
  for (const link of links) {
    let entries;
    if (link.kind === 'invocation') {
      const stored = parseRowsText(link.rows);
      entries = [
        invocationEntry(ledger.sqlite.prepare(INVOCATION_SELECT).raw().get(link.ref_id) as RawRow),
        ...(ledger.sqlite.prepare(OUTCOMES_OF_INVOCATION_SELECT).raw().all(link.ref_id) as RawRow[]).map((o) =>
          outcomeEntry(o, stored.get(`o${o[0] as number}`)?.pending ?? false),
        ),
      ];
    } else {
      entries = [outcomeEntry(ledger.sqlite.prepare(OUTCOME_SELECT).raw().get(link.ref_id) as RawRow, false)];
    }
    const hash = linkHash(prev, link.seq, link.kind, link.ref_id, link.at, entries);
    ledger.sqlite.prepare('UPDATE chain SET prev_hash = ?, hash = ? WHERE seq = ?').run(prev, hash, link.seq);
    prev = hash;
  }
}

/** A committed invocation whose background hook never finished (still pending). */
async function setupPendingBackground() {
  const ctx = setup([
    {
      id: 'slow',
      point: 'stop',
      mode: 'background',
      timeoutMs: 60_000,
      run: (_inv, hookCtx) => new Promise<void>((r) => hookCtx.signal.addEventListener('abort', () => r())),
    },
  ]);
  await ctx.runner.run({ point: 'stop' });
  return ctx;
}

/** Computed by the first release's encoder: ledgers written since then must keep verifying. */
const GOLDEN_LINK_HASH = '4bac51f30ff5035e74a7b10238a5fddb5949840745d356b1544d758cecc09215';

describe('link format', () => {
  it('is stable: a link over fixed rows hashes to the value ledgers already hold (v1)', () => {
    // Rows of every value kind the encoder sees: integers, a float, null, empty and non-ASCII strings.
    const invocation: RawRow = [
      7,
      1,
      'pre_tool_use',
      null,
      'sess',
      3,
      'Bash',
      'toolu_1',
      null,
      '/w',
      '{"command":"ls"}',
      '{"point":"pre_tool_use"}',
      null,
      null,
      'completed',
      'allow',
      'ok',
      null,
      '',
      null,
      null,
      1700000000000,
      1700000000004,
      4321,
      99,
      'hôst',
      'f'.repeat(64),
    ];
    const outcome: RawRow = [
      40,
      7,
      'ok',
      'pre_tool_use',
      10,
      0,
      0,
      'foreground',
      'guardrail',
      'in_process',
      'completed',
      'allow',
      1,
      null,
      'fine ✓',
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      null,
      5000,
      1700000000001,
      2.5,
    ];
    const entries = [invocationEntry(invocation), outcomeEntry(outcome, false), outcomeEntry([41, ...outcome.slice(1)], true)];
    expect(linkHash('0'.repeat(64), 12, 'invocation', 7, 1700000000004, entries)).toBe(GOLDEN_LINK_HASH);
  });
});
