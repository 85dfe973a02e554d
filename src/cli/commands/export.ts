import { InputError } from '../../domain/errors.js';
import { EXPORT_FORMATS, writeExport, type ExportFormat } from '../../ledger/queries/export.js';
import { ledgerOptions, stringFlag, type Command } from '../command.js';
import { openLedgerFor } from '../context.js';
import { DECISION_USAGE, filterFromFlags, filterOptions, FILTER_USAGE } from '../filter-flags.js';

export const command: Command = {
  summary: 'stream invocations with their outcomes as JSON Lines (or CSV) for a SIEM',
  usage: `export [filters] [--format jsonl|csv] [--db PATH]

  Writes every invocation the filters select, oldest first, one per line: JSON Lines with
  the invocation, its hook set, input, modified input, raw payload and every outcome in
  execution order (see docs/reports.md for the shape); or, with --format csv, the
  invocation-level columns with a header line. Streamed: memory stays flat however large
  the ledger. Without --since/--until, invocations recorded while it runs are included
  if they match; a time window is fixed to the invocations present when it starts.
${FILTER_USAGE}
${DECISION_USAGE}
  --format F           jsonl (default) or csv`,
  options: { ...ledgerOptions, ...filterOptions, format: { type: 'string' } },
  async run(args, io) {
    const filter = filterFromFlags(args);
    const format = stringFlag(args, 'format') ?? 'jsonl';
    if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
      throw new InputError(`--format: "${format}" is not an export format (expected ${EXPORT_FORMATS.join(' or ')})`);
    }
    const ledger = openLedgerFor(args, io);
    // The export reads each page once: SQLite's default 16 MB page cache would only cost memory.
    ledger.sqlite.pragma('cache_size = -1024');
    try {
      try {
        await writeExport(ledger, filter, io.stdout, { format: format as ExportFormat });
      } catch (error) {
        // The reader closed the pipe (`hookledger export | head`): what it wanted was written.
        if ((error as NodeJS.ErrnoException).code === 'EPIPE') return 0;
        throw error;
      }
      return 0;
    } finally {
      ledger.close();
    }
  },
};
