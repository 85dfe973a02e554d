import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { normaliseInvocation } from '../../src/domain/invocation.js';
import type { Outcome } from '../../src/domain/outcomes.js';
import { floorHour, HOUR_MS, rollupTotals, SETTLE_MS } from '../../src/ledger/health-rollup.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { hookHealth } from '../../src/ledger/queries/health.js';
import { catchUpRollup, MAX_HOURS_PER_TURN, rollupUpkeep } from '../../src/ledger/rollup-upkeep.js';
import { LedgerWriter } from '../../src/ledger/write.js';
import { runCli } from '../cli-helpers.js';
import { sleep, tempLedger } from '../helpers.js';
import { outcome } from './fixture.js';

const builtHours = (ledger: SqliteLedger) =>
  ledger.sqlite.prepare('SELECT hour FROM health_rollup_hours ORDER BY hour').pluck().all() as number[];

const ran = (hookId: string, at: number, durationUs: number, fields: Partial<Outcome> = {}): Outcome =>
  outcome(hookId, { startedAt: at, durationUs, ...fields });

/** `hours` hours of history ending `endsAgo` ms before now, written through the real write path. */
function history(hours: number, endsAgo: number) {
  const { ledger, path, dir } = tempLedger();
  const writer = new LedgerWriter(ledger);
  const setId = writer.hookSetId(defineHooks({ name: 'h', hooks: [{ id: 'a', point: 'pre_tool_use', run: () => undefined }] }));
  const start = floorHour(Date.now() - endsAgo) - hours * HOUR_MS;
  for (let h = 0; h < hours; h++) {
    for (let i = 0; i < 6; i++) {
      const at = start + h * HOUR_MS + i * 600_000 + 11;
      const id = writer.begin(setId, normaliseInvocation({ point: 'pre_tool_use', toolName: 'Bash' }), at);
      writer.finish(
        id,
        {
          decision: 'none',
          decisiveHookId: null,
          reasonCode: null,
          message: null,
          modifiedInput: null,
          additionalContext: [],
          durationUs: 1,
        },
        [
          ran('a', at + 1, 100 + i * 37, i === 3 ? { status: 'failed', decision: null, failureReason: 'execution_failed' } : {}),
          ran('b', at + 2, 5 + h),
        ],
      );
    }
  }
  return { ledger, start, path, dir };
}

const UNTIL = floorHour(Date.now()) + HOUR_MS;
const report = (ledger: SqliteLedger, since: number) => hookHealth(ledger, { since, until: UNTIL });

describe('the hook-health rollup kept current by writers', () => {
  it('a writer rolls up the newest closed hours after its commits, and the report then builds nothing', async () => {
    const { ledger, start } = history(30, 2 * HOUR_MS);
    expect(builtHours(ledger)).toEqual([]);
    // The upkeep runs at the writer's next idle moment, not inside any commit.
    await sleep(50);
    const built = builtHours(ledger);
    const latestClosed = floorHour(Date.now() - SETTLE_MS) - HOUR_MS;
    expect(built.length).toBe(MAX_HOURS_PER_TURN);
    expect(built.at(-1)).toBe(latestClosed);
    const since = built[0]!;
    const { stats } = rollupTotals(ledger, since, latestClosed + HOUR_MS, undefined, Date.now());
    expect(stats.built).toBe(0);
    expect(stats.rolledUp).toBe(MAX_HOURS_PER_TURN);
    // The same report as one built from nothing.
    const kept = report(ledger, since);
    ledger.sqlite.exec('DELETE FROM health_rollups; DELETE FROM health_rollup_hours; DELETE FROM health_rollup_state');
    expect(report(ledger, since)).toEqual(kept);
    expect(kept.hooks.find((h) => h.hookId === 'a')!.failures).toBeGreaterThan(0);
    // The older history is left to the first report that reaches back (or catchUpRollup).
    expect(start).toBeLessThan(since);
    ledger.close();
  });

  it('a one-event `hookledger claude` process, which exits right after its answer, takes the turn on its way out', async () => {
    const { ledger, path, dir } = history(30, 2 * HOUR_MS);
    // Closed before the writer's own turn could run: only the hook process can build the hours.
    await ledger.close();
    const config = join(dir, 'hooks.json');
    writeFileSync(config, JSON.stringify({ name: 'h', hooks: [{ id: 'a', point: 'pre_tool_use', command: 'exit 0' }] }));
    const payload = readFileSync(join(import.meta.dirname, '../fixtures/claude-code/01-pretooluse-bash-rm.json'), 'utf8');
    const reopened = () => {
      const l = SqliteLedger.open({ path });
      try {
        return builtHours(l);
      } finally {
        void l.close();
      }
    };
    expect(reopened()).toEqual([]);
    const result = await runCli(['claude', '--config', config, '--db', path], { input: payload, cwd: dir });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const built = reopened();
    expect(built.length).toBe(MAX_HOURS_PER_TURN);
    expect(built.at(-1)).toBe(floorHour(Date.now() - SETTLE_MS) - HOUR_MS);
  });

  it('catches up forward from the newest built hour, a slice per turn, then has nothing to do', () => {
    const { ledger, start } = history(60, 0);
    catchUpRollup(ledger);
    const all = builtHours(ledger);
    expect(all[0]).toBe(start);
    const whole = report(ledger, start);
    // A writer away for 30 hours: the newest 30 hours are missing.
    const cut = all.at(-1)! - 29 * HOUR_MS;
    ledger.sqlite.prepare('DELETE FROM health_rollups WHERE hour >= ?').run(cut);
    ledger.sqlite.prepare('DELETE FROM health_rollup_hours WHERE hour >= ?').run(cut);
    expect(rollupUpkeep(ledger)).toBe(MAX_HOURS_PER_TURN);
    expect(rollupUpkeep(ledger)).toBe(30 - MAX_HOURS_PER_TURN);
    expect(rollupUpkeep(ledger)).toBe(0);
    expect(builtHours(ledger)).toEqual(all);
    expect(report(ledger, start)).toEqual(whole);
    ledger.close();
  });
});
