import { floorHour, hasRollups, HOUR_MS, LOOKBACK_MS, openStarts, rollupTotals, SETTLE_MS } from './health-rollup.js';
import type { Ledger } from './open.js';
import { prepared } from './statements.js';

/**
 * Keeps the hook-health rollup current as records commit, so that the first hook-health report
 * reads closed hours instead of building them (docs/reports.md, "Hook health rollup").
 *
 * The writer that commits the first record after an hour has closed (ended SETTLE_MS ago, see
 * health-rollup.ts) rolls that hour up, never inside the decision: the writer schedules it for
 * an idle moment after its commit (a timer; a one-event process, which exits before timers
 * run, takes the turn in its 'exit' handler, after its answer was written). A check costs one primary-key read of the newest built hour; long-lived writers
 * make it at most once a minute.
 *
 * A turn builds at most MAX_HOURS_PER_TURN hours, forward from the newest built one, so that a
 * writer that was away for days catches up in slices a server can take between requests. On a
 * ledger never rolled up (an upgrade, a bulk import) writers build the newest day; the older
 * history is built by the first report that reaches back, or at once by `catchUpRollup` (the
 * ledger generator's last step).
 */

/** Hours one upkeep turn builds at most (a few thousand outcomes each on a busy ledger). */
export const MAX_HOURS_PER_TURN = 24;
/** How often a long-lived writer looks for closed hours, ms. */
const CHECK_EVERY_MS = 60_000;

/**
 * The hours the next turn should build, [since, until), or null when there are none (the
 * common case: one indexed read). Forward from the newest built hour; on a ledger never
 * rolled up, the newest `maxHours` only (older history is built by the first report that
 * reaches back, or `catchUpRollup`). Hours blocked by a running invocation or a pending outcome
 * are left to the report that needs them, so that a stuck one is not retried by every writer.
 */
function dueHours(ledger: Ledger, now: number, maxHours: number): [number, number] | null {
  const latestClosed = floorHour(now - SETTLE_MS) - HOUR_MS;
  const newestBuilt = prepared<[], number | null>(ledger, 'SELECT max(hour) FROM health_rollup_hours').pluck().get() ?? null;
  if (newestBuilt !== null && newestBuilt >= latestClosed) return null;
  const firstStart = prepared<[], number | null>(ledger, 'SELECT min(started_at) FROM invocations').pluck().get() ?? null;
  if (firstStart === null) return null;
  const since = Math.max(floorHour(firstStart), newestBuilt === null ? latestClosed - (maxHours - 1) * HOUR_MS : newestBuilt + HOUR_MS);
  const until = Math.min(since + maxHours * HOUR_MS, latestClosed + HOUR_MS);
  const open = openStarts(ledger);
  const blocked = (hour: number) => open.some((at) => at >= hour - LOOKBACK_MS && at < hour + HOUR_MS);
  for (let hour = since; hour < until; hour += HOUR_MS) if (!blocked(hour)) return [since, until];
  return null;
}

/**
 * Builds the hours that are due (at most `maxHours`). Returns how many it built (0: nothing
 * to do). A failure is swallowed: the rollup is a cache, and a report builds what is missing.
 */
export function rollupUpkeep(ledger: Ledger, now = Date.now(), maxHours = MAX_HOURS_PER_TURN): number {
  try {
    if (ledger.sqlite.readonly || !ledger.sqlite.open || !hasRollups(ledger)) return 0;
    const due = dueHours(ledger, now, maxHours);
    return due === null ? 0 : rollupTotals(ledger, due[0], due[1], undefined, now).stats.built;
  } catch {
    return 0;
  }
}

/** Builds every closed hour of the ledger (a bulk writer's last step). */
export function catchUpRollup(ledger: Ledger, now = Date.now()): void {
  const firstStart = prepared<[], number | null>(ledger, 'SELECT min(started_at) FROM invocations').pluck().get() ?? null;
  if (firstStart === null || !hasRollups(ledger)) return;
  rollupTotals(ledger, floorHour(firstStart), floorHour(now), undefined, now);
}

/**
 * Per writer: after a commit, schedules an upkeep turn when one may be due. Called on the
 * decision path, so it only compares a timestamp there.
 */
export class RollupKeeper {
  private nextCheckAt = 0;
  private scheduled = false;

  constructor(private readonly ledger: Ledger) {}

  committed(): void {
    const now = Date.now();
    if (this.scheduled || now < this.nextCheckAt) return;
    this.nextCheckAt = now + CHECK_EVERY_MS;
    this.scheduled = true;
    const turn = (exitCode?: number) => {
      process.off('exit', turn);
      if (!this.scheduled) return;
      this.scheduled = false;
      // A process stopped by a signal (an agent's hook timeout) leaves at once; the next writer takes the turn.
      if (exitCode !== undefined && exitCode >= 128) return;
      // A turn that built a full slice leaves older hours: take the next slice at the next idle moment.
      if (rollupUpkeep(this.ledger) >= MAX_HOURS_PER_TURN) this.nextCheckAt = 0;
    };
    setTimeout(() => turn(), 0).unref();
    // A one-event process (an agent's command hook) calls process.exit right after its answer,
    // before any timer gets a turn: it takes the turn on its way out.
    process.once('exit', turn);
  }
}
