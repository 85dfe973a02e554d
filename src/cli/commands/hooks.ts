import { InputError } from '../../domain/errors.js';
import { DEFAULT_HEALTH_WINDOW_MS } from '../../ledger/queries/health.js';
import { DEFAULT_THRESHOLDS, renderHealth } from '../../reports/health-text.js';
import { boolFlag, ledgerOptions, stringFlag, type Command, type CommandArgs } from '../command.js';
import { openLedgerFor } from '../context.js';
import { filterOptions, wholeNumber } from '../filter-flags.js';
import { parseNamedTimeBound } from '../../domain/time.js';
import { useColour, writeJson, writeReport } from '../io.js';
import { painter } from '../../reports/paint.js';

export const command: Command = {
  summary: 'hook health: runs, decisions, failures, timeouts, p50/p95/max duration',
  usage: `hooks [--since WHEN] [--until WHEN] [--hook ID] [--host NAME] [--source ID] [--slow-ms N] [--db PATH] [--json]

  Per hook, over a time window (default the last 30 days): runs, allows, denials, asks,
  modifies, times it decided, failures, timeouts, observe-only violations, skips, and
  p50 / p95 / max duration. Worst first; failing (>= 1% failures or timeouts) and slow
  (p95 >= --slow-ms, default 500) hooks are flagged.
  --since WHEN   from (inclusive): an ISO date/time, or an age like 7d, 12h (default 30d)
  --until WHEN   before (exclusive), default now
  --hook ID      one hook
  --host NAME    only invocations recorded on this host
  --source ID    only this ship source's invocations (a central ledger; docs/ship.md);
                 with --host or --source the report is aggregated live, not from the rollup
  --json         {"since", "until", "hooks": [...]}, durations in µs`,
  options: {
    ...ledgerOptions,
    since: { type: 'string' },
    until: { type: 'string' },
    hook: { type: 'string' },
    host: filterOptions.host,
    source: filterOptions.source,
    'slow-ms': { type: 'string' },
  },
  async run(args, io) {
    const now = Date.now();
    const untilFlag = stringFlag(args, 'until');
    const sinceFlag = stringFlag(args, 'since');
    const until = untilFlag === undefined ? now : parseNamedTimeBound('--until', untilFlag, now);
    const since = sinceFlag === undefined ? until - DEFAULT_HEALTH_WINDOW_MS : parseNamedTimeBound('--since', sinceFlag, now);
    if (since >= until)
      throw new InputError(
        `--since: ${sinceFlag ?? '30 days before --until'} is not before --until ${untilFlag ?? 'now'}: the window is empty`,
      );
    const hookId = stringFlag(args, 'hook');
    const host = nonEmptyFlag(args, 'host');
    const source = nonEmptyFlag(args, 'source');
    const slowUs = wholeNumber(args, 'slow-ms', DEFAULT_THRESHOLDS.slowUs / 1000, 1) * 1000;
    const ledger = await openLedgerFor(args, io);
    try {
      const report = await ledger.hookHealth({
        since,
        until,
        ...(hookId !== undefined ? { hookId } : {}),
        ...(host !== undefined ? { host } : {}),
        ...(source !== undefined ? { source } : {}),
      });
      if (boolFlag(args, 'json')) writeJson(io, report);
      else writeReport(io, renderHealth(report, painter(useColour(io)), { ...DEFAULT_THRESHOLDS, slowUs }));
      return 0;
    } finally {
      await ledger.close();
    }
  },
};

/** A flag's value, trimmed as the report filters trim it; an empty one is a mistake. */
function nonEmptyFlag(args: CommandArgs, flag: string): string | undefined {
  const value = stringFlag(args, flag)?.trim();
  if (value === '') throw new InputError(`--${flag}: must not be empty`);
  return value;
}
