import { loadHookSet } from '../../config/load.js';
import { UsageError } from '../../domain/errors.js';
import type { Ledger } from '../../ledger/open.js';
import { listReplayRuns, showReplayRun } from '../../ledger/queries/replay-runs.js';
import { DEFAULT_REPLAY_CONCURRENCY, replay, type ReplayProgress } from '../../replay/replay.js';
import { renderReplayRun, renderReplayRunList } from '../../reports/replay-text.js';
import { boolFlag, configOption, ledgerOptions, stringFlag, type Command, type CommandArgs } from '../command.js';
import { hookSetFor, openLedgerFor } from '../context.js';
import { DECISION_USAGE, FILTER_USAGE, filterFromFlags, filterOptions } from '../filter-flags.js';
import { useColour, writeJson, type CliIo, writeReport } from '../io.js';
import { painter } from '../../reports/paint.js';

/** Changes shown in text output unless --all (JSON always has them all). */
const TEXT_CHANGES = 20;
/** Exit status after Ctrl-C (128 + SIGINT), as shells report it. */
const INTERRUPTED = 130;

export const command: Command = {
  summary: 'replay stored invocations against another hook set and show what would change',
  usage: `replay --config NEW_HOOKS [--baseline OLD_HOOKS] [selection] [options]
       replay list [--limit N] [--json]
       replay show RUN_ID [--all] [--fail-on-change] [--json]

  Runs each selected invocation's original input through the hook set with ctx.replay = true,
  writes nothing to the live tables, stores the run and one result per invocation, and prints
  the totals and every change (old and new decision, decisive hooks, which hooks changed).

  selection (the denials filters; all completed invocations by default):
${FILTER_USAGE}
${DECISION_USAGE}
  --limit N            only the N most recent matching invocations

  options:
  --baseline PATH      replay the old hook set first: invocations whose recording it
                       does not reproduce are reported apart, changes are measured against it
  --with-background    also run background hooks (skipped by default)
  --concurrency N      invocations replayed at once; default ${DEFAULT_REPLAY_CONCURRENCY} when a hook runs
                       out of process (command, http), else 1 (stateful hooks need 1)
  --fail-on-change     exit 1 when any decision changed, 0 otherwise (for CI)
  --all                list every change in text output (default: the first ${TEXT_CHANGES})
  --json               the run, every change and every baseline mismatch as JSON

  Ctrl-C stops cleanly: the results so far are kept, the run is marked incomplete (exit 130).`,
  options: {
    ...ledgerOptions,
    ...configOption,
    ...filterOptions,
    baseline: { type: 'string' },
    limit: { type: 'string' },
    concurrency: { type: 'string' },
    'with-background': { type: 'boolean' },
    'fail-on-change': { type: 'boolean' },
    all: { type: 'boolean' },
  },
  async run(args, io) {
    const [sub, ...rest] = args.positionals;
    if (sub === 'list') return list(args, io, rest);
    if (sub === 'show') return show(args, io, rest);
    if (sub !== undefined)
      throw new UsageError(`replay: unknown subcommand "${sub}" (use replay --config PATH, replay list or replay show RUN_ID)`);
    return runReplay(args, io);
  },
};

async function runReplay(args: CommandArgs, io: CliIo): Promise<number> {
  const filter = filterFromFlags(args);
  const limit = positiveInt(args, 'limit');
  const concurrency = positiveInt(args, 'concurrency');
  const hookSet = await hookSetFor(args, io);
  const baselinePath = stringFlag(args, 'baseline');
  const baseline = baselinePath ? await loadHookSet(baselinePath) : undefined;
  const ledger = openLedgerFor(args, io);
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    // A second Ctrl-C means "now": the run stays `running` and the next replay marks it incomplete.
    if (interrupts > 1) process.exit(INTERRUPTED);
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSigint);
  const progress = progressBar(io);
  try {
    const outcome = await replay({
      ledger,
      hookSet,
      ...(baseline ? { baseline } : {}),
      filter,
      ...(limit !== undefined ? { limit } : {}),
      ...(concurrency !== undefined ? { concurrency } : {}),
      withBackground: boolFlag(args, 'with-background'),
      signal: controller.signal,
      onProgress: progress.update,
    });
    progress.clear();
    if (outcome.status === 'incomplete')
      io.stderr.write(
        `hookledger: replay interrupted; run ${outcome.runId} keeps the ${outcome.totals.replayed} results so far (incomplete)\n`,
      );
    print(ledger, outcome.runId, args, io);
    if (outcome.status === 'incomplete') return INTERRUPTED;
    return boolFlag(args, 'fail-on-change') && outcome.changed > 0 ? 1 : 0;
  } finally {
    progress.clear();
    process.off('SIGINT', onSigint);
    ledger.close();
  }
}

function list(args: CommandArgs, io: CliIo, rest: string[]): number {
  if (rest.length > 0) throw new UsageError(`replay list: unexpected argument "${rest[0]}"`);
  const ledger = openLedgerFor(args, io);
  try {
    const runs = listReplayRuns(ledger, { limit: positiveInt(args, 'limit') ?? 20 });
    if (boolFlag(args, 'json')) writeJson(io, runs);
    else writeReport(io, renderReplayRunList(runs, painter(useColour(io))));
    return 0;
  } finally {
    ledger.close();
  }
}

function show(args: CommandArgs, io: CliIo, rest: string[]): number {
  const ref = rest[0];
  if (ref === undefined || !/^\d+$/.test(ref))
    throw new UsageError('replay show: give a replay run id (hookledger replay list shows them)');
  if (rest.length > 1) throw new UsageError(`replay show: unexpected argument "${rest[1]}"`);
  const ledger = openLedgerFor(args, io);
  try {
    const detail = print(ledger, Number(ref), args, io);
    return boolFlag(args, 'fail-on-change') && detail.changedTotal > 0 ? 1 : 0;
  } finally {
    ledger.close();
  }
}

function print(ledger: Ledger, runId: number, args: CommandArgs, io: CliIo) {
  const json = boolFlag(args, 'json');
  const detail = showReplayRun(ledger, runId, json || boolFlag(args, 'all') ? {} : { limit: TEXT_CHANGES });
  if (json) writeJson(io, detail);
  else writeReport(io, renderReplayRun(detail, painter(useColour(io))));
  return detail;
}

function positiveInt(args: CommandArgs, name: string): number | undefined {
  const text = stringFlag(args, name);
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`--${name}: expected a positive whole number, got "${text}"`);
  return Number(text);
}

/**
 * A one-line progress bar with rate and ETA on stderr, only on a TTY (never in pipes, CI logs
 * or tests), redrawn at most ten times a second.
 */
function progressBar(io: CliIo): { update: (p: ReplayProgress) => void; clear: () => void } {
  const stderr = io.stderr as NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  if (!stderr.isTTY || io.env.TERM === 'dumb') return { update: () => {}, clear: () => {} };
  let lastDraw = 0;
  let drawn = false;
  return {
    update(p) {
      const now = Date.now();
      if (now - lastDraw < 100 && p.done < p.total) return;
      lastDraw = now;
      const rate = p.elapsedMs > 0 ? (p.done * 1000) / p.elapsedMs : 0;
      const eta = rate > 0 ? (p.total - p.done) / rate : 0;
      const fraction = p.total > 0 ? Math.min(1, p.done / p.total) : 1;
      const width = 24;
      const filled = Math.round(fraction * width);
      const line = `replay ${p.runId} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${p.done}/${p.total}  ${Math.round(rate)}/s  ETA ${formatEta(eta)}`;
      stderr.write(`\r\u001b[K${line.slice(0, (stderr.columns ?? 80) - 1)}`);
      drawn = true;
    },
    clear() {
      if (drawn) stderr.write('\r\u001b[K');
      drawn = false;
    },
  };
}

function formatEta(seconds: number): string {
  if (!Number.isFinite(seconds)) return '-';
  if (seconds < 60) return `${Math.ceil(seconds)}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(Math.ceil(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}
