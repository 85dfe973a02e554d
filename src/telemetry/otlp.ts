/**
 * The OpenTelemetry side of telemetry: spans and log records over OTLP/HTTP with the SDK's
 * batching processors and exporters. This module (and the SDK under it) is imported only when
 * telemetry is configured (cli/telemetry-runner.ts), and is kept out of the claude bundle.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Tracer } from '@opentelemetry/api';
import { SeverityNumber, type Logger } from '@opentelemetry/api-logs';
import { setGlobalErrorHandler } from '@opentelemetry/core';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { detectResources, envDetector, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { BatchSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Outcome } from '../domain/outcomes.js';
import type { RunObservation } from '../runner/observer.js';
import { decisionBody, DECISION_EVENT, executed, hookAttributes, invocationAttributes } from './attributes.js';
import type { TelemetryConfig } from './config.js';
import { ObservationRedactor, type TelemetryRecord } from './record.js';

const SCOPE = 'hookledger';
const VERSION = '0.1.0';
/** Invocations whose background hooks may still report, kept to parent their spans; bounded. */
const MAX_AWAITING_BACKGROUND = 10_000;

/** Exports invocations as spans (one per invocation, a child per executed hook) and a log record per decision. */
export interface OtlpExporter {
  /** Exports a decided invocation (live or from the ledger). Never throws; never waits. */
  exportRecord(record: TelemetryRecord): void;
  /** Exports what the runner observed (a decision, or a background hook that finished later). */
  observe(observation: RunObservation): void;
  /** Sends what is batched; resolves false if that took longer than `timeoutMs`. */
  flush(timeoutMs: number): Promise<boolean>;
  /** Flushes (bounded by `timeoutMs`) and stops. */
  shutdown(timeoutMs: number): Promise<boolean>;
  /** Export batches the collector did not accept so far (each also reported once through `warn`). */
  readonly failures: number;
}

export interface OtlpExporterOptions {
  config: TelemetryConfig;
  env: NodeJS.ProcessEnv;
  /** Receives one line per distinct problem (a dead collector is reported once, not per batch). */
  warn: (line: string) => void;
  /** Batch sizes for bulk export (`export --format otlp`); the SDK defaults otherwise. */
  bulk?: boolean;
}

/** The resource: service.name `hookledger` unless OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES say otherwise. */
export function telemetryResource(): Resource {
  return resourceFromAttributes({ [ATTR_SERVICE_NAME]: SCOPE, [ATTR_SERVICE_VERSION]: VERSION }).merge(
    detectResources({ detectors: [envDetector] }),
  );
}

export function createOtlpExporter(options: OtlpExporterOptions): OtlpExporter {
  const { config } = options;
  const reported = new Set<string>();
  const warnOnce = (key: string, line: string) => {
    if (reported.has(key)) return;
    reported.add(key);
    options.warn(line);
  };
  // The SDK reports failed exports here (and nowhere else by default): one line per kind of failure.
  let failures = 0;
  setGlobalErrorHandler((error) => {
    failures += 1;
    const text = describe(error);
    warnOnce(text.replace(/\d+/g, '#'), `telemetry: export failed (${text}); decisions are unaffected and stay in the ledger`);
  });

  const resource = telemetryResource();
  const batch = options.bulk ? { maxExportBatchSize: 512, maxQueueSize: 8192, scheduledDelayMillis: 200 } : {};
  const tracerProvider = config.tracesUrl
    ? new TracerProvider({
        resource,
        spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: config.tracesUrl }), ...batch })],
      })
    : null;
  const loggerProvider = config.logsUrl
    ? new LoggerProvider({
        resource,
        processors: [new BatchLogRecordProcessor({ exporter: new OTLPLogExporter({ url: config.logsUrl }), ...batch })],
      })
    : null;
  const tracer: Tracer | null = tracerProvider?.getTracer(SCOPE, VERSION) ?? null;
  const logger: Logger | null = loggerProvider?.getLogger(SCOPE, VERSION) ?? null;
  const redactor = new ObservationRedactor();
  /** The span context and record of invocations with background hooks still to report. */
  const awaiting = new Map<number, { parent: Context; record: TelemetryRecord; left: number }>();

  function hookSpan(parent: Context, record: TelemetryRecord, outcome: Outcome): void {
    if (!tracer || !executed(outcome)) return;
    const start = outcome.startedAt!;
    const span = tracer.startSpan(
      `hook ${outcome.hookId}`,
      { kind: SpanKind.INTERNAL, startTime: start, attributes: hookAttributes(record, outcome) },
      parent,
    );
    if (outcome.status === 'failed' || outcome.status === 'timed_out') {
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.failureReason ?? outcome.status });
    }
    span.end(start + (outcome.durationUs ?? 0) / 1000);
  }

  function exportRecord(record: TelemetryRecord): Context {
    const end = record.startedAt + (record.durationUs ?? 0) / 1000;
    let parent = ROOT_CONTEXT;
    if (tracer) {
      const span = tracer.startSpan(
        `hookledger ${record.point}`,
        { kind: SpanKind.INTERNAL, root: true, startTime: record.startedAt, attributes: invocationAttributes(record) },
        ROOT_CONTEXT,
      );
      if (record.status !== 'completed') span.setStatus({ code: SpanStatusCode.ERROR, message: `invocation ${record.status}` });
      parent = trace.setSpan(ROOT_CONTEXT, span);
      for (const outcome of record.outcomes) hookSpan(parent, record, outcome);
      span.end(end);
    }
    logger?.emit({
      eventName: DECISION_EVENT,
      timestamp: end,
      severityNumber: record.decision === 'deny' ? SeverityNumber.WARN : SeverityNumber.INFO,
      severityText: record.decision === 'deny' ? 'WARN' : 'INFO',
      body: decisionBody(record),
      attributes: invocationAttributes(record),
      context: parent,
    });
    return parent;
  }

  async function settle(work: Promise<unknown>, timeoutMs: number, what: string): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
    ]);
    clearTimeout(timer);
    // A collector already reported as failing is not reported again as slow: one line per problem.
    if (!done && failures === 0) {
      const where = [config.tracesUrl, config.logsUrl].filter((u) => u !== null).join(', ');
      warnOnce(
        `slow-${what}`,
        `telemetry: ${what} to ${where} not finished within ${timeoutMs} ms (collector down or slow?); the rest is dropped, decisions are unaffected`,
      );
    }
    return done;
  }

  return {
    exportRecord(record) {
      try {
        exportRecord(record);
      } catch (error) {
        warnOnce(`record-${describe(error)}`, `telemetry: invocation ${record.id} not exported: ${describe(error)}`);
      }
    },
    observe(observation) {
      try {
        if (observation.kind === 'decided') {
          const record = redactor.decided(observation);
          const parent = exportRecord(record);
          const left = record.outcomes.filter((o) => o.mode === 'background' && o.status === 'pending').length;
          if (left > 0) {
            if (awaiting.size >= MAX_AWAITING_BACKGROUND) awaiting.delete(awaiting.keys().next().value!);
            awaiting.set(record.id, { parent, record, left });
          }
        } else {
          const entry = awaiting.get(observation.invocationId);
          if (!entry) return;
          hookSpan(entry.parent, entry.record, redactor.background(observation));
          // Forgotten once each of its background hooks has reported.
          entry.left -= 1;
          if (entry.left === 0) awaiting.delete(observation.invocationId);
        }
      } catch (error) {
        warnOnce(`observe-${describe(error)}`, `telemetry: an observation was not exported: ${describe(error)}`);
      }
    },
    flush(timeoutMs) {
      return settle(Promise.all([tracerProvider?.forceFlush(), loggerProvider?.forceFlush()]), timeoutMs, 'export');
    },
    async shutdown(timeoutMs) {
      return settle(Promise.all([tracerProvider?.shutdown(), loggerProvider?.shutdown()]), timeoutMs, 'export');
    },
    get failures() {
      return failures;
    },
  };
}

function describe(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim().slice(0, 300);
}
