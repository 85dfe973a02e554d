import { resolve } from 'node:path';
import { LedgerError } from '../../domain/errors.js';
import { assertIntact, readAnchor, writeAnchor, type VerifyReport } from '../../ledger/verify.js';
import { boolFlag, ledgerOptions, stringFlag, type Command } from '../command.js';
import { openLedgerFor } from '../context.js';
import { formatDuration, table } from '../../reports/format.js';
import { useColour, writeJson, writeReport } from '../io.js';
import { painter, type Paint } from '../../reports/paint.js';

export const command: Command = {
  summary: 'check the tamper-evidence chain; exit 5 when a record was changed, inserted or removed',
  usage: `verify [--db PATH] [--json] [--anchor FILE]

  Walks the hash chain in commit order, recomputes every link from the rows it covers, and
  names the first record that was changed, inserted or removed outside hookledger.
  --anchor FILE  keep the chain head in a file outside the database: checked when the file
                 exists (the chain must still contain that head), then moved to the new head
                 when the check passes; created when missing
  --json         the full report (stable fields: ok, location, links, head, writers, problems,
                 anchor)
  On PostgreSQL every writer appends its own chain: each is walked and shown (writers), and
  every problem names the writer whose chain holds the record; --anchor needs one chain
  (SQLite).
  Exit code 0 when intact, 5 when not (for cron), 3 when the ledger cannot be read.`,
  options: { ...ledgerOptions, anchor: { type: 'string' } },
  async run(args, io) {
    const anchorFile = stringFlag(args, 'anchor');
    const anchor = anchorFile ? readAnchor(resolve(anchorFile)) : undefined;
    const ledger = await openLedgerFor(args, io);
    let report: VerifyReport;
    try {
      report = await ledger.verify(anchor ? { anchor } : {});
    } finally {
      await ledger.close();
    }
    let anchorWritten = false;
    if (anchorFile && report.ok) {
      // An anchor is one chain head; a ledger with one chain per writer has none to keep.
      if (!report.head)
        throw new LedgerError(
          'ledger_engine_unsupported',
          `verify --anchor is not supported on ${ledger.engine} ledgers (one chain per writer)`,
        );
      writeAnchor(resolve(anchorFile), report.head, report.location);
      anchorWritten = true;
    }
    if (boolFlag(args, 'json')) writeJson(io, { ...report, ...(anchorFile ? { anchorFile: resolve(anchorFile), anchorWritten } : {}) });
    else writeReport(io, render(report, anchorFile, anchorWritten, painter(useColour(io))));
    // Throws IntegrityError (exit 5, one stderr line naming the first problem) when not intact.
    assertIntact(report);
    return 0;
  },
};

function render(report: VerifyReport, anchorFile: string | undefined, anchorWritten: boolean, paint: Paint): string {
  const lines: string[] = [];
  const { records } = report;
  lines.push(
    report.ok
      ? paint('green', paint('bold', 'ledger intact'))
      : paint('red', paint('bold', `ledger NOT intact: ${report.problemCount} problem${report.problemCount === 1 ? '' : 's'}`)),
    `${report.location}`,
    `links ${report.links}: invocations ${records.invocations}, background outcomes ${records.backgroundOutcomes}, prunes ${records.checkpoints}`,
    `pruned links ${report.prunedLinks}; uncommitted invocations ${report.uncommitted}`,
  );
  if (report.head) lines.push(`head  ${report.head.seq} ${report.head.hash}`);
  for (const chain of report.writers ?? [])
    lines.push(`writer ${chain.writer}: links ${chain.links}, head ${chain.head.seq} ${chain.head.hash}`);
  if (report.anchor) lines.push(`anchor ${report.anchor.seq} ${report.anchor.status}`);
  if (anchorFile && anchorWritten) lines.push(`anchor written to ${anchorFile}`);
  lines.push(`checked in ${formatDuration(report.durationMs * 1000)}`);
  if (report.problems.length > 0) {
    // The writer column only where chains are per writer (its problems name their writer).
    const byWriter = report.problems.some((p) => p.writer !== undefined);
    lines.push(
      '',
      table(
        ['kind', 'table', 'id', ...(byWriter ? ['writer'] : []), 'link', 'detail'],
        report.problems.map((p) => [
          p.kind,
          p.table,
          String(p.id),
          ...(byWriter ? [p.writer ?? '-'] : []),
          p.seq === null ? '-' : String(p.seq),
          p.detail,
        ]),
      ),
    );
    if (report.problemCount > report.problems.length) lines.push(`… ${report.problemCount - report.problems.length} more`);
  }
  return lines.join('\n');
}
