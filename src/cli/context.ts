import { existsSync } from 'node:fs';
import { UsageError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import { loadHookSet } from '../config/load.js';
import { importModule } from '../runtimes/import-module.js';
import { openLedger, type Ledger, type SqliteOpenOptions } from '../ledger/ledger.js';
import { resolveLedgerPath } from '../ledger/paths.js';
import type { RunObserver } from '../runner/observer.js';
import { createRunner, type Runner, type RunnerOptions } from '../runner/runner.js';
import { resolveTelemetryConfig } from '../telemetry/config.js';
import { createTelemetrySink, type OtlpModule } from '../telemetry/sink.js';
import { stringFlag, type CommandArgs } from './command.js';
import type { CliIo } from './io.js';

/**
 * Opens the ledger named by `--db`, `HOOKLEDGER_DB` or the default path (whose directory is
 * created). A PostgreSQL URL there opens PostgreSQL (openLedger chooses); the SQLite options
 * below are then unused.
 */
export function openLedgerFor(args: CommandArgs, io: CliIo, options: Partial<SqliteOpenOptions> = {}): Promise<Ledger> {
  const { path, isDefault } = resolveLedgerPath(stringFlag(args, 'db'), io.env);
  const synchronous = io.env.HOOKLEDGER_SYNC === 'full' ? 'full' : 'normal';
  // How long to wait for another process's write lock; a malformed value keeps the default.
  const busy = io.env.HOOKLEDGER_BUSY_TIMEOUT_MS;
  const busyTimeoutMs = busy !== undefined && /^\d+$/.test(busy.trim()) ? Number(busy) : undefined;
  return openLedger({
    path,
    createDirectory: isDefault,
    synchronous,
    ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}),
    ...options,
  });
}

/** Loads the hook set named by `--config` (else `HOOKLEDGER_CONFIG`). */
export async function hookSetFor(args: CommandArgs, io: CliIo): Promise<HookSet> {
  const path = stringFlag(args, 'config') ?? io.env.HOOKLEDGER_CONFIG;
  if (!path) throw new UsageError('--config PATH is required (a .ts/.js module exporting defineHooks(...), or a JSON hook set)');
  return loadHookSet(path);
}

/** What an agent command adds to a runner's options. */
export interface AgentRunnerOptions extends Omit<RunnerOptions, 'observer'> {
  /** More observers (serve's /metrics), beside telemetry. */
  observers?: RunObserver[];
  /** Load the OpenTelemetry SDK now, not at the first decision (long-lived processes). */
  loadTelemetryNow?: boolean;
}

/**
 * The one place the CLI builds a runner for an agent command (run, claude, serve, and every
 * agent command added later): it gets OTLP export when configured (`--otel URL` or the
 * OTEL_EXPORTER_OTLP_* variables; docs/telemetry.md), and its `close()` also flushes that
 * export within a bounded time. With telemetry off nothing of OpenTelemetry is loaded.
 */
export function runnerFor(args: CommandArgs, io: CliIo, options: AgentRunnerOptions): Runner {
  const { observers = [], loadTelemetryNow, ...runnerOptions } = options;
  const config = resolveTelemetryConfig(io.env, stringFlag(args, 'otel'));
  const warn = (line: string) => io.stderr.write(`hookledger: ${line}\n`);
  for (const line of config?.warnings ?? []) warn(line);
  const sink =
    config && (config.tracesUrl !== null || config.logsUrl !== null)
      ? createTelemetrySink(config, { env: io.env, warn, loadModule: loadOtlpModule })
      : null;
  const all = sink ? [sink.observe, ...observers] : observers;
  const observer: RunObserver | undefined =
    all.length === 0 ? undefined : all.length === 1 ? all[0] : (observation) => all.forEach((observe) => observe(observation));
  const runner = createRunner({ ...runnerOptions, ...(observer ? { observer } : {}) });
  if (!sink) return runner;
  if (loadTelemetryNow) void sink.load();
  return {
    hookSet: runner.hookSet,
    get hookSetId() {
      return runner.hookSetId;
    },
    run: (input) => runner.run(input),
    get backgroundPending() {
      return runner.backgroundPending;
    },
    async close(closeOptions) {
      await runner.close(closeOptions);
      await sink.close();
    },
  };
}

/**
 * Imports telemetry/otlp.js beside this module's folder (dist/telemetry/ from dist/cli/ and
 * from the claude bundle in dist/bundle/), so the bundle never contains the SDK.
 */
export function loadOtlpModule(): Promise<OtlpModule> {
  const js = new URL('../telemetry/otlp.js', import.meta.url);
  const url = existsSync(js) ? js : new URL('../telemetry/otlp.ts', import.meta.url);
  return importModule(url.href) as Promise<unknown> as Promise<OtlpModule>;
}
