/**
 * Whether and where to export telemetry, from the standard OpenTelemetry environment variables
 * and the `--otel` flag. Deliberately free of any OpenTelemetry import: every agent command
 * resolves this on every event, and with telemetry off nothing more is loaded.
 */

/** Where OTLP/HTTP goes; the SDK itself is loaded only when one of these is set. */
export interface TelemetryConfig {
  /** Full URL for spans (…/v1/traces), or null when traces are off. */
  tracesUrl: string | null;
  /** Full URL for log records (…/v1/logs), or null when logs are off. */
  logsUrl: string | null;
  /** The longest a one-shot process waits on exit for what it exported (ms). */
  flushTimeoutMs: number;
  /** Problems with the settings, one line each (the rest of the settings still apply). */
  warnings: string[];
}

/** How long a one-shot command (`claude`, `run`) waits for its export before exiting, by default. */
export const DEFAULT_FLUSH_TIMEOUT_MS = 1000;

const SIGNAL_PATHS = { traces: 'v1/traces', logs: 'v1/logs' } as const;

/**
 * The telemetry settings, or null when telemetry is off (no endpoint configured, or
 * `OTEL_SDK_DISABLED=true`). `--otel URL` is a base endpoint like `OTEL_EXPORTER_OTLP_ENDPOINT`
 * and wins over it; the per-signal `OTEL_EXPORTER_OTLP_{TRACES,LOGS}_ENDPOINT` are used as they
 * are, and `OTEL_{TRACES,LOGS}_EXPORTER=none` turns one signal off.
 */
export function resolveTelemetryConfig(env: NodeJS.ProcessEnv, flag?: string): TelemetryConfig | null {
  if (flag === undefined && env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  const base = nonBlank(flag) ?? nonBlank(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  const warnings: string[] = [];
  const url = (signal: keyof typeof SIGNAL_PATHS): string | null => {
    const exporter = env[`OTEL_${signal.toUpperCase()}_EXPORTER`]?.trim().toLowerCase();
    if (exporter === 'none') return null;
    const specific = flag === undefined ? nonBlank(env[`OTEL_EXPORTER_OTLP_${signal.toUpperCase()}_ENDPOINT`]) : undefined;
    const chosen = specific ?? (base !== undefined ? `${base.replace(/\/+$/, '')}/${SIGNAL_PATHS[signal]}` : undefined);
    if (chosen === undefined) return null;
    if (!/^https?:\/\/[^\s/]+/i.test(chosen)) {
      warnings.push(`telemetry: ${signal} endpoint "${chosen}" is not an http(s) URL; ${signal} not exported`);
      return null;
    }
    return chosen;
  };
  const tracesUrl = url('traces');
  const logsUrl = url('logs');
  if (tracesUrl === null && logsUrl === null) {
    return warnings.length > 0 ? { tracesUrl, logsUrl, flushTimeoutMs: DEFAULT_FLUSH_TIMEOUT_MS, warnings } : null;
  }
  const protocol = env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim();
  if (protocol !== undefined && protocol !== '' && protocol !== 'http/json') {
    warnings.push(
      `telemetry: OTEL_EXPORTER_OTLP_PROTOCOL=${protocol}: hookledger sends OTLP over HTTP as JSON (http/json), which collectors accept on the same port`,
    );
  }
  let flushTimeoutMs = DEFAULT_FLUSH_TIMEOUT_MS;
  const flushText = env.HOOKLEDGER_OTEL_FLUSH_MS?.trim();
  if (flushText !== undefined && flushText !== '') {
    if (/^\d+$/.test(flushText) && Number(flushText) <= 60_000) flushTimeoutMs = Number(flushText);
    else
      warnings.push(
        `telemetry: HOOKLEDGER_OTEL_FLUSH_MS="${flushText}" is not a whole number of ms up to 60000; using ${DEFAULT_FLUSH_TIMEOUT_MS}`,
      );
  }
  return { tracesUrl, logsUrl, flushTimeoutMs, warnings };
}

function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
