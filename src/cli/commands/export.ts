import { InputError, UsageError } from '../../domain/errors.js';
import { EXPORT_FORMATS, writeExport, type ExportFormat } from '../../ledger/queries/export.js';
import { ledgerOptions, stringFlag, type Command, type CommandArgs } from '../command.js';
import { loadOtlpModule, openLedgerFor } from '../context.js';
import type { CliIo } from '../io.js';
import { DECISION_USAGE, filterFromFlags, filterOptions, FILTER_USAGE } from '../filter-flags.js';

export const command: Command = {
  summary: 'stream invocations with their outcomes as JSON Lines (or CSV) for a SIEM',
  usage: `export [filters] [--format jsonl|csv] [--db PATH]
       export [filters] --format otlp [--to URL] [--db PATH]

  Writes every invocation the filters select, oldest first, one per line: JSON Lines with
  the invocation, its hook set, input, modified input, raw payload and every outcome in
  execution order (see docs/reports.md for the shape); or, with --format csv, the
  invocation-level columns with a header line. Streamed: memory stays flat however large
  the ledger. Without --since/--until, invocations recorded while it runs are included
  if they match; a time window is fixed to the invocations present when it starts.
${FILTER_USAGE}
${DECISION_USAGE}
  --format F           jsonl (default) or csv; otlp sends the invocations as OpenTelemetry
                       spans and log records (the same as live export, docs/telemetry.md)
  --to URL             with otlp: the collector's OTLP/HTTP base URL (else $OTEL_EXPORTER_OTLP_ENDPOINT)`,
  options: { ...ledgerOptions, ...filterOptions, format: { type: 'string' }, to: { type: 'string' } },
  async run(args, io) {
    const filter = filterFromFlags(args);
    const format = stringFlag(args, 'format') ?? 'jsonl';
    if (format === 'otlp') return exportOtlp(args, io, filter);
    if (stringFlag(args, 'to') !== undefined) throw new UsageError('--to is for --format otlp; other formats go to stdout');
    if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
      throw new InputError(`--format: "${format}" is not an export format (expected ${EXPORT_FORMATS.join(', ')} or otlp)`);
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

/** Backfills a period to an OpenTelemetry collector; the SDK is loaded only for this format. */
async function exportOtlp(args: CommandArgs, io: CliIo, filter: ReturnType<typeof filterFromFlags>): Promise<number> {
  const [{ resolveTelemetryConfig }, { backfillOtlp }, { exportRecords }] = await Promise.all([
    import('../../telemetry/config.js'),
    import('../../telemetry/backfill.js'),
    import('../../ledger/queries/export.js'),
  ]);
  const config = resolveTelemetryConfig(io.env, stringFlag(args, 'to'));
  for (const line of config?.warnings ?? []) io.stderr.write(`hookledger: ${line}\n`);
  if (!config || (config.tracesUrl === null && config.logsUrl === null)) {
    throw new UsageError("--format otlp needs --to URL (or OTEL_EXPORTER_OTLP_ENDPOINT): the collector's OTLP/HTTP address");
  }
  const to = [config.tracesUrl, config.logsUrl].filter((u) => u !== null).join(', ');
  const { createOtlpExporter } = await loadOtlpModule();
  const exporter = createOtlpExporter({ config, env: io.env, warn: (line) => io.stderr.write(`hookledger: ${line}\n`), bulk: true });
  // A backfill waits longer for the collector than an agent's one-shot process may.
  const flushTimeoutMs = io.env.HOOKLEDGER_OTEL_FLUSH_MS ? config.flushTimeoutMs : 30_000;
  const ledger = openLedgerFor(args, io);
  try {
    const count = await backfillOtlp(exportRecords(ledger, filter), exporter, { flushTimeoutMs, to });
    io.stderr.write(`hookledger: exported ${count} invocation(s) to ${to}\n`);
    return 0;
  } finally {
    ledger.close();
  }
}
