/**
 * Prometheus metrics of a long-lived runner (`serve`'s GET /metrics), with prom-client. Fed by
 * the runner's observer, so counting never touches the decision path. Loaded only by serve.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RunObservation } from '../runner/observer.js';

/** Seconds: hooks range from in-process checks (µs) to command hooks and HTTP calls (seconds). */
const HOOK_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds: one SQLite transaction, usually well under a millisecond. */
const WRITE_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

export interface HookMetrics {
  /** The observer to give the runner (cli/context.ts runnerFor's `observers`). */
  observe(observation: RunObservation): void;
  /** The exposition text and its content type. */
  render(): Promise<{ contentType: string; body: string }>;
}

/**
 * Creates the metrics. `backgroundPending` is read at each scrape (the queue depth gauge).
 * Label values are bounded by the hook set (hook ids) and by enums (points, decisions, reason
 * codes, statuses), so their number stays small.
 */
export function createHookMetrics(options: { backgroundPending: () => number; defaultMetrics?: boolean }): HookMetrics {
  const registry = new Registry();
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const decisions = new Counter({
    name: 'hookledger_decisions_total',
    help: 'Decisions recorded, by point, decision, decisive hook and reason code ("" when none).',
    labelNames: ['point', 'decision', 'hook', 'reason'] as const,
    registers: [registry],
  });
  const invocationSeconds = new Histogram({
    name: 'hookledger_invocation_duration_seconds',
    help: 'Time to decide an invocation (every foreground hook and the merge), by point and decision.',
    labelNames: ['point', 'decision'] as const,
    buckets: HOOK_BUCKETS,
    registers: [registry],
  });
  const hookSeconds = new Histogram({
    name: 'hookledger_hook_duration_seconds',
    help: 'Time each executed hook took, by point, hook, mode and status.',
    labelNames: ['point', 'hook', 'mode', 'status'] as const,
    buckets: HOOK_BUCKETS,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'hookledger_hook_failures_total',
    help: 'Hooks that failed (timeouts included), by point, hook, mode and failure reason.',
    labelNames: ['point', 'hook', 'mode', 'reason'] as const,
    registers: [registry],
  });
  const timeouts = new Counter({
    name: 'hookledger_hook_timeouts_total',
    help: 'Hooks that ran out of time, by point, hook and mode.',
    labelNames: ['point', 'hook', 'mode'] as const,
    registers: [registry],
  });
  const writeSeconds = new Histogram({
    name: 'hookledger_ledger_write_duration_seconds',
    help: 'Ledger write time per record (a decision: its begin and final commit; a background outcome: its commit).',
    labelNames: ['record'] as const,
    buckets: WRITE_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: 'hookledger_background_queue_depth',
    help: 'Background hooks queued or running.',
    registers: [registry],
    collect() {
      this.set(options.backgroundPending());
    },
  });

  function hook(o: {
    point: string;
    hookId: string;
    mode: string;
    status: string;
    failureReason: string | null;
    durationUs: number | null;
    startedAt: number | null;
  }) {
    if (o.startedAt === null || o.status === 'skipped' || o.status === 'pending') return;
    const labels = { point: o.point, hook: o.hookId, mode: o.mode };
    if (o.durationUs !== null) hookSeconds.observe({ ...labels, status: o.status }, o.durationUs / 1e6);
    if (o.failureReason !== null) failures.inc({ ...labels, reason: o.failureReason });
    if (o.status === 'timed_out') timeouts.inc(labels);
  }

  return {
    observe(observation) {
      if (observation.kind === 'decided') {
        const { report } = observation;
        decisions.inc({
          point: report.point,
          decision: report.decision,
          hook: report.decisiveHookId ?? '',
          reason: report.reasonCode ?? '',
        });
        invocationSeconds.observe({ point: report.point, decision: report.decision }, report.durationUs / 1e6);
        for (const outcome of report.outcomes) hook(outcome);
        writeSeconds.observe({ record: 'invocation' }, observation.ledgerWriteUs / 1e6);
      } else {
        hook(observation.outcome);
        writeSeconds.observe({ record: 'background_outcome' }, observation.ledgerWriteUs / 1e6);
      }
    },
    async render() {
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
