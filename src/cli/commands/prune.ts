import { UsageError } from '../../domain/errors.js';
import type { PruneReport } from '../../ledger/prune.js';
import { boolFlag, ledgerOptions, stringFlag, type Command } from '../command.js';
import { openLedgerFor } from '../context.js';
import { namingFlag } from '../flag-errors.js';
import { parseNamedTimeBound } from '../../domain/time.js';
import { formatDuration, formatTime, table } from '../../reports/format.js';
import { writeJson, writeReport } from '../io.js';

export const command: Command = {
  summary: 'delete old invocations in batches, keeping sessions under legal hold',
  usage: `prune --before AGE|DATE [--dry-run] [--batch-size N] [--db PATH] [--json]

  --before      an age (180d, 12h, 2w, 1y, 30m) or an ISO date/time (UTC unless it names a
                zone, the same instants the reports use): invocations that started before it
                are deleted with their outcomes
  --dry-run     count what would be deleted; change nothing
  --batch-size  invocations per transaction (default 500): writers wait at most one batch
  Sessions under legal hold (hookledger hold) are kept and listed. Invocations still running
  or with a background hook still pending are kept. Each batch records a checkpoint in the
  tamper-evidence chain, so hookledger verify still passes on what remains.`,
  options: { ...ledgerOptions, before: { type: 'string' }, 'dry-run': { type: 'boolean' }, 'batch-size': { type: 'string' } },
  async run(args, io) {
    const beforeText = stringFlag(args, 'before');
    if (!beforeText) throw new UsageError('prune: --before AGE|DATE is required (e.g. --before 180d)');
    const before = parseNamedTimeBound('--before', beforeText, Date.now());
    const batchText = stringFlag(args, 'batch-size');
    if (batchText !== undefined && !/^\d+$/.test(batchText))
      throw new UsageError(`--batch-size: must be a positive integer, got "${batchText}"`);
    const ledger = await openLedgerFor(args, io);
    try {
      const report = await ledger
        .prune({
          before,
          dryRun: boolFlag(args, 'dry-run'),
          ...(batchText !== undefined ? { batchSize: Number(batchText) } : {}),
        })
        .catch((error: unknown) => {
          throw namingFlag(error, PRUNE_FLAGS);
        });
      if (boolFlag(args, 'json')) writeJson(io, report);
      else writeReport(io, render(report));
      return 0;
    } finally {
      await ledger.close();
    }
  },
};

/** pruneLedger's options as this command's flags. */
const PRUNE_FLAGS = { before: '--before', batchSize: '--batch-size' };

function render(r: PruneReport): string {
  const verb = r.dryRun ? 'would delete' : 'deleted';
  const lines = [`${verb} ${r.invocations} invocations and ${r.outcomes} outcomes started before ${formatTime(r.before)}`];
  if (!r.dryRun) {
    lines.push(
      `${r.batches} batches, longest lock ${r.longestBatchMs} ms; ${r.links} chain links replaced by ${r.checkpoints.length} checkpoints`,
    );
  }
  if (r.inProgress > 0) lines.push(`kept ${r.inProgress} invocations still running or with a pending background hook`);
  if (r.held.length > 0) {
    lines.push(`kept ${r.held.reduce((n, h) => n + h.invocations, 0)} invocations of ${r.held.length} sessions under legal hold:`);
    lines.push(
      table(
        ['session', 'invocations'],
        r.held.map((h) => [h.sessionId, String(h.invocations)]),
      ),
    );
  }
  lines.push(`took ${formatDuration(r.durationMs * 1000)}`);
  return lines.join('\n');
}
