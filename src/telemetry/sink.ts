import type { RunObservation, RunObserver } from '../runner/observer.js';
import type { TelemetryConfig } from './config.js';
import type { createOtlpExporter, OtlpExporter } from './otlp.js';

/** The OpenTelemetry module (telemetry/otlp.ts), loaded only when telemetry is configured. */
export interface OtlpModule {
  createOtlpExporter: typeof createOtlpExporter;
}

/** Live export of a runner's decisions: an observer that never blocks, and a bounded close. */
export interface TelemetrySink {
  readonly observe: RunObserver;
  /** Loads the SDK now rather than at the first decision (for long-lived processes). */
  load(): Promise<void>;
  /** Exports what is still batched, waiting at most the configured flush time; then stops. */
  close(): Promise<void>;
}

/** Observations kept while the SDK loads; beyond this they are dropped (and said so once). */
const MAX_WAITING = 10_000;
/** The longest `close()` waits for the SDK to load (local files) before its flush time starts. */
const LOAD_TIMEOUT_MS = 5000;

/**
 * Creates the sink without loading the SDK: the first observation (after the first decision
 * is recorded and answered) or `load()` imports it; observations made meanwhile wait in a
 * bounded queue. A failure to load is one warning, and telemetry is then off.
 */
export function createTelemetrySink(
  config: TelemetryConfig,
  options: { env: NodeJS.ProcessEnv; warn: (line: string) => void; loadModule: () => Promise<OtlpModule> },
): TelemetrySink {
  let exporter: OtlpExporter | null = null;
  let loading: Promise<void> | null = null;
  let failed = false;
  let dropped = false;
  const waiting: RunObservation[] = [];

  function load(): Promise<void> {
    loading ??= options.loadModule().then(
      (module) => {
        exporter = module.createOtlpExporter({ config, env: options.env, warn: options.warn });
        for (const observation of waiting.splice(0)) exporter.observe(observation);
      },
      (error: unknown) => {
        failed = true;
        waiting.length = 0;
        options.warn(`telemetry: cannot load OpenTelemetry (${error instanceof Error ? error.message : String(error)}); telemetry is off`);
      },
    );
    return loading;
  }

  return {
    observe(observation) {
      if (exporter) return exporter.observe(observation);
      if (failed) return;
      if (waiting.length < MAX_WAITING) waiting.push(observation);
      else if (!dropped) {
        dropped = true;
        options.warn(`telemetry: more than ${MAX_WAITING} decisions waited for the SDK to load; some were not exported`);
      }
      void load();
    },
    load,
    async close() {
      // Observations are handed over on a later turn of the event loop than the decision: let
      // those already scheduled arrive before deciding there is nothing to export.
      await new Promise((resolve) => setImmediate(resolve));
      if (!exporter && waiting.length === 0) return;
      // Loading reads local files only; its own bound is generous so a loaded machine still exports.
      let timer: NodeJS.Timeout | undefined;
      const loaded = await Promise.race([
        load().then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), LOAD_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
      if (!loaded) {
        options.warn(`telemetry: OpenTelemetry did not load within ${LOAD_TIMEOUT_MS} ms; this process's decisions were not exported`);
        return;
      }
      await exporter?.shutdown(config.flushTimeoutMs);
    },
  };
}
