import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { normaliseInvocation } from '../../src/domain/invocation.js';
import { LedgerWriter, type InvocationResult } from '../../src/ledger/write.js';
import { runCli } from '../cli-helpers.js';
import { tempLedger } from '../helpers.js';

const at = (iso: string) => Date.parse(iso);
/** Start times around 2026-11-23T09:00Z, which is 18:00 in Tokyo. */
const STARTS = ['2026-11-22T23:30:00Z', '2026-11-23T05:00:00Z', '2026-11-23T08:59:59.999Z', '2026-11-23T09:00:00Z', '2026-11-23T10:00:00Z'];
const TOKYO = { TZ: 'Asia/Tokyo' };

/** A ledger (written through the real write path) with one invocation at each of STARTS. */
function ledgerAt(): string {
  const { ledger, path } = tempLedger();
  const writer = new LedgerWriter(ledger);
  const hookSetId = writer.hookSetId(defineHooks({ name: 'clock', hooks: [{ id: 'noop', point: 'pre_tool_use', run: () => undefined }] }));
  for (const [n, start] of STARTS.entries()) {
    const invocation = normaliseInvocation({ point: 'pre_tool_use', sessionId: `s-${n}`, toolName: 'Bash', toolInput: { command: 'ls' } });
    const id = writer.begin(hookSetId, invocation, at(start));
    const result: InvocationResult = {
      decision: 'none',
      decisiveHookId: null,
      reasonCode: null,
      message: null,
      modifiedInput: null,
      additionalContext: [],
      durationUs: 10,
    };
    writer.finish(id, result, [], at(start) + 1);
  }
  ledger.close();
  return path;
}

// Issue 10 §1: prune read --before with Date.parse (local time, rolled-over dates); the reports
// with the strict UTC parser. Now one parser: the same instant whatever the process time zone.
describe('prune --before and the reports read time alike, under a non-UTC TZ', () => {
  it('cuts at the instant the reports mean, in Asia/Tokyo, and verify still passes', { timeout: 60_000 }, async () => {
    const path = ledgerAt();
    const bound = '2026-11-23T09:00';
    const exported = await runCli(['export', '--until', bound, '--db', path], { env: TOKYO });
    expect(exported.stderr).toBe('');
    const reportIds = exported.stdout
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { id: number }).id);
    expect(reportIds).toEqual([1, 2, 3]);

    const dry = await runCli(['prune', '--before', bound, '--dry-run', '--json', '--db', path], { env: TOKYO });
    expect(dry.stderr).toBe('');
    expect(JSON.parse(dry.stdout)).toMatchObject({ before: Date.UTC(2026, 10, 23, 9), invocations: 3 });

    const pruned = await runCli(['prune', '--before', bound, '--json', '--db', path], { env: TOKYO });
    expect(JSON.parse(pruned.stdout)).toMatchObject({ invocations: 3 });
    const sqlite = new Database(path, { readonly: true });
    expect(sqlite.prepare('SELECT id FROM invocations ORDER BY id').pluck().all()).toEqual([4, 5]);
    sqlite.close();
    expect((await runCli(['verify', '--db', path])).code).toBe(0);
  });

  it(
    'refuses impossible dates, future cutoffs and bad batch sizes with one line naming the flag; deletes nothing',
    { timeout: 60_000 },
    async () => {
      const path = ledgerAt();
      const cases: [string[], RegExp][] = [
        [['--before', '2026-02-30'], /^hookledger: --before: "2026-02-30" is not a date: no such day or time\n$/],
        [['--before', '2026-11-23T24:00'], /^hookledger: --before: "2026-11-23T24:00" is not a date: no such day or time\n$/],
        [['--before', 'six months'], /^hookledger: --before: "six months" is not a date \(use an ISO date/],
        [
          ['--before', '2999-01-01'],
          /^hookledger: --before: 2999-01-01T00:00:00\.000Z is in the future; nothing that recent can be pruned\n$/,
        ],
        [['--before', '1d', '--batch-size', '0'], /^hookledger: --batch-size: must be an integer from 1 to 100000, got 0\n$/],
      ];
      for (const [args, message] of cases) {
        const r = await runCli(['prune', ...args, '--db', path], { env: TOKYO });
        expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 2, stderr: expect.stringMatching(message) });
      }
      const hold = await runCli(['hold', 's-1', '--reason', '  ', '--db', path]);
      expect(hold.code).toBe(2);
      expect(hold.stderr).toBe('hookledger: --reason: must say why the session is held (e.g. a case number)\n');
      const sqlite = new Database(path, { readonly: true });
      expect(sqlite.prepare('SELECT count(*) FROM invocations').pluck().get()).toBe(STARTS.length);
      sqlite.close();
    },
  );
});
