import { describe, expect, it } from 'vitest';
import { LedgerError } from '../../src/domain/errors.js';
import { defineHooks } from '../../src/domain/hooks.js';
import { emptyTotals } from '../../src/domain/replay.js';
import { deny } from '../../src/domain/results.js';
import { isPostgresUrl, loadPostgresEngine, openLedger, printableUrl, type Ledger } from '../../src/ledger/ledger.js';
import type { InvocationRecorder, RecordingLedger } from '../../src/runner/recorder.js';
import { createRunner } from '../../src/runner/runner.js';
import { bash, tempDir } from '../helpers.js';
import { join } from 'node:path';

const hookSet = defineHooks({
  name: 'seam',
  version: '1',
  hooks: [
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      run: (inv) => (JSON.stringify(inv.toolInput).includes('rm ') ? deny('no rm', 'safety_violation') : undefined),
    },
    { id: 'watch', point: 'pre_tool_use', mode: 'background', run: () => undefined },
  ],
});

async function opened(): Promise<Ledger> {
  return openLedger({ path: join(tempDir(), 'ledger.db') });
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

describe('openLedger chooses the engine once', () => {
  it('a file path opens SQLite; every caller-facing method answers through the interface', async () => {
    const ledger = await opened();
    expect(ledger.engine).toBe('sqlite');
    expect(ledger.location).toMatch(/ledger\.db$/);
    const runner = createRunner({ hookSet, ledger });
    const denied = await runner.run({ ...bash('rm -rf /tmp/x'), sessionId: 's-1' });
    const allowed = await runner.run({ ...bash('ls'), sessionId: 's-1' });
    await runner.close();
    expect(denied.decision).toBe('deny');

    expect((await ledger.explain(denied.invocationId)).invocation.id).toBe(denied.invocationId);
    expect((await ledger.listDenials({}, { limit: 10 })).rows.map((r) => r.invocationId)).toEqual([denied.invocationId]);
    expect((await ledger.groupDenials({}, 'hook')).groups).toEqual([expect.objectContaining({ key: 'no-rm', count: 1 })]);
    expect((await ledger.listSessions({}, { limit: 10 })).rows.map((s) => s.sessionId)).toEqual(['s-1']);
    expect((await ledger.sessionTimeline('s-1', { limit: 10 })).events).toHaveLength(2);
    expect((await ledger.hookHealth()).hooks.map((h) => h.hookId).sort()).toEqual(['no-rm', 'watch']);
    const records = await collect(ledger.exportRecords({}));
    expect(records.map((r) => r.id)).toEqual([denied.invocationId, allowed.invocationId]);
    const jsonl = (await collect(ledger.exportText({}, 'jsonl'))).join('');
    expect(
      jsonl
        .trimEnd()
        .split('\n')
        .map((line) => (JSON.parse(line) as { id: number }).id),
    ).toEqual(records.map((r) => r.id));
    const csv = (await collect(ledger.exportText({}, 'csv'))).join('');
    expect(csv.split('\r\n')[0]).toMatch(/^id,startedAt,/);
    expect((await ledger.verify()).ok).toBe(true);

    await ledger.placeHold('s-1', 'case 7');
    expect((await ledger.listHolds()).map((h) => h.sessionId)).toEqual(['s-1']);
    // A cutoff after every record but not in the future (prune refuses one: nothing that recent exists).
    await new Promise((resolve) => setTimeout(resolve, 5));
    const pruned = await ledger.prune({ before: Date.now() });
    expect(pruned.held).toEqual([{ sessionId: 's-1', invocations: 2 }]);
    await ledger.releaseHold('s-1');
    await expect(ledger.releaseHold('s-1')).rejects.toMatchObject({ code: 'not_found' });

    const source = await ledger.replaySource({ filter: {} });
    expect(source.total).toBe(2);
    const rows = await source.next();
    expect((await source.recordedOutcomes(rows.map((r) => r.id))).get(denied.invocationId)!.map((o) => o.hook_id)).toEqual([
      'no-rm',
      'watch',
    ]);
    const runs = ledger.replayRuns();
    const totals = emptyTotals(2);
    const runId = await runs.startRun({
      hookSet,
      baseline: null,
      selection: { filter: {} },
      options: { concurrency: 1, withBackground: false },
      startedAt: Date.now(),
      totals,
    });
    await runs.finish(runId, 'completed', totals);
    expect((await ledger.listReplayRuns()).map((r) => r.id)).toEqual([runId]);
    expect((await ledger.showReplayRun(runId)).run.status).toBe('completed');
    await ledger.close();
  });

  it('a PostgreSQL URL (as --db or HOOKLEDGER_DB hold it) is recognised, and printed without its password', () => {
    expect(isPostgresUrl('postgres://u:p@h/db')).toBe(true);
    expect(isPostgresUrl('postgresql://h/db')).toBe(true);
    expect(isPostgresUrl('/var/lib/postgres/ledger.db')).toBe(false);
    expect(printableUrl('postgres://alice:s3cret@db.internal:5433/audit')).toBe('postgres://alice@db.internal:5433/audit');
    expect(printableUrl('postgres://alice:s3cret@[bad')).not.toContain('s3cret');
  });

  it('a build without the PostgreSQL engine says so in one line, without the password', async () => {
    const missing = new URL('./postgres/no-such-engine.js', new URL('../../src/ledger/ledger.ts', import.meta.url)).href;
    const error = await loadPostgresEngine('postgres://alice:s3cret@127.0.0.1:1/audit', missing).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LedgerError);
    expect(error).toMatchObject({ code: 'ledger_engine_unavailable' });
    const message = (error as Error).message;
    expect(message).toMatch(/^cannot open postgres:\/\/alice@127\.0\.0\.1:1\/audit: this hookledger has no PostgreSQL engine/);
    expect(message).not.toContain('s3cret');
    expect(message).not.toContain('\n');
  });
});

/**
 * An engine whose writes settle later (as a network database's do): the real SQLite recorder,
 * each answer handed over as a Promise. The runner must give the same reports and records.
 */
function deferred(ledger: Ledger): RecordingLedger {
  return {
    writer(options) {
      const inner = ledger.writer(options);
      const later = <T>(f: () => T | Promise<T>) =>
        new Promise<T>((resolve, reject) => setImmediate(() => Promise.resolve().then(f).then(resolve, reject)));
      const recorder: InvocationRecorder = {
        hookSetId: (set) => later(() => inner.hookSetId(set)),
        begin: (id, invocation, at) => later(() => inner.begin(id, invocation, at)),
        finish: (id, result, outcomes, at) => later(() => inner.finish(id, result, outcomes, at)),
        startBackground: (row, at, order) => later(() => inner.startBackground(row, at, order)),
        completeBackground: (row, outcome) => later(() => inner.completeBackground(row, outcome)),
      };
      return recorder;
    },
  };
}

describe('the runner over an engine that answers asynchronously', () => {
  it('records the same decisions and background outcomes, and close waits for the last write', async () => {
    const ledger = await opened();
    const runner = createRunner({ hookSet, ledger: deferred(ledger) });
    expect(runner.hookSetId).toBeNull();
    const report = await runner.run(bash('rm -rf /'));
    expect(runner.hookSetId).toEqual(expect.any(Number));
    expect(report.decision).toBe('deny');
    const ok = await runner.run(bash('ls'));
    await runner.close();
    const explained = await ledger.explain(ok.invocationId);
    expect(explained.outcomes.map((o) => [o.hookId, o.status])).toEqual([
      ['no-rm', 'completed'],
      ['watch', 'completed'],
    ]);
    expect((await ledger.verify()).ok).toBe(true);
    await ledger.close();
  });
});
