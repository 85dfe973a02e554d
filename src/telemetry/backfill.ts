import { HookledgerError } from '../domain/errors.js';
import type { ExportRecord } from '../ledger/queries/export.js';
import type { OtlpExporter } from './otlp.js';
import { recordFromExport } from './record.js';

/** Records handed to the exporter between two flushes: bounds memory and keeps the SDK's queues from dropping. */
const FLUSH_EVERY = 256;

/** The collector did not take a backfill. Exit 1. */
export class TelemetryExportError extends HookledgerError {
  constructor(message: string) {
    super('telemetry_export_failed', message);
  }
}

/**
 * `hookledger export --format otlp`: sends recorded invocations (read through the ledger's
 * export query, already redacted as stored) as the same spans and log records as live export,
 * flushing every few hundred so memory stays flat and nothing is dropped. Throws
 * TelemetryExportError when the collector refused or did not answer in time.
 */
export async function backfillOtlp(
  records: Iterable<ExportRecord> | AsyncIterable<ExportRecord>,
  exporter: OtlpExporter,
  options: { flushTimeoutMs: number; to: string },
): Promise<number> {
  let count = 0;
  let sinceFlush = 0;
  const flush = async () => {
    const done = await exporter.flush(options.flushTimeoutMs);
    if (!done || exporter.failures > 0) {
      await exporter.shutdown(0);
      throw new TelemetryExportError(
        `export to ${options.to} failed after reading ${count} invocation(s): ${exporter.failures > 0 ? 'the collector refused or could not be reached' : `no answer within ${options.flushTimeoutMs} ms`}`,
      );
    }
    sinceFlush = 0;
  };
  for await (const record of records) {
    exporter.exportRecord(recordFromExport(record));
    count += 1;
    sinceFlush += 1;
    if (sinceFlush >= FLUSH_EVERY) await flush();
  }
  await flush();
  await exporter.shutdown(options.flushTimeoutMs);
  return count;
}
