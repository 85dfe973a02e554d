import { DEFAULT_BACKGROUND_DEADLINE_MS, resolveOnErrorPolicy, type OnErrorPolicy } from '../adapters/claude.js';
import { killRunningHookProcesses } from '../runtimes/process-groups.js';
import { loadHookSet } from '../config/load.js';
import type { HookSet } from '../domain/hooks.js';
import { describeThrown, UsageError } from '../domain/errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Runner } from '../runner/runner.js';
import { configOption, otelOption, stringFlag, type CommandArgs } from './command.js';
import { openLedgerFor, runnerFor, type AgentRunnerOptions } from './context.js';
import { readAll, type CliIo } from './io.js';

/** The flags every agent command hook (claude, meerkat, codex, gemini) takes. */
export const hookCommandOptions = {
  db: { type: 'string' },
  ...configOption,
  ...otelOption,
  'on-error': { type: 'string' },
  'background-deadline-ms': { type: 'string' },
  // After the agent's end-of-turn or end-of-session event: start the shipper (ship-after-hook.ts).
  'ship-to': { type: 'string' },
} as const;

/**
 * Where an agent command hook gets its hook set and ledger, and whether it owns the process's
 * stop signals. A process per event (the default) loads and opens afresh and exits on a stop
 * signal; the claude daemon (src/cli/daemon/) installs its cache, which keeps ledgers open and
 * hook sets loaded between events, and leaves its signals alone.
 */
export interface HookCommandResources {
  loadHookSet(configPath: string): Promise<HookSet>;
  openLedger(args: CommandArgs, io: CliIo): Promise<Ledger>;
  handleStopSignals: boolean;
}

const perProcess: HookCommandResources = { loadHookSet, openLedger: openLedgerFor, handleStopSignals: true };
let resources = perProcess;

/** Replaces where agent command hooks in this process load hook sets and open ledgers (the daemon's cache). */
export function useHookCommandResources(next: HookCommandResources): void {
  resources = next;
}

/** What an adapter's decide function needs from the CLI, built the same way for every agent. */
export interface HookCommandDeps {
  input: Promise<string>;
  loadHookSet: () => Promise<HookSet>;
  openLedger: () => Promise<Ledger>;
  createRunner: (options: AgentRunnerOptions) => Runner;
  policy: OnErrorPolicy;
  onBackgroundError: (error: unknown) => void;
}

/**
 * One process flow for every agent command hook: the error policy and background deadline read
 * (a bad flag is a stderr line, never a lost answer), stop signals kill our hooks' process
 * groups while deciding, and `body` decides and answers in its agent's protocol.
 */
export async function runHookCommand(
  args: CommandArgs,
  io: CliIo,
  body: (deps: HookCommandDeps, deadlineMs: number) => Promise<number>,
): Promise<number> {
  const { policy, problem } = resolveOnErrorPolicy(stringFlag(args, 'on-error'), io.env);
  if (problem) io.stderr.write(`hookledger: ${problem}\n`);
  const deadlineMs = parseDeadline(stringFlag(args, 'background-deadline-ms'), io);
  const configPath = stringFlag(args, 'config') ?? io.env.HOOKLEDGER_CONFIG;
  const stopOnSignal = resources.handleStopSignals ? onStopSignal(io) : () => {};
  try {
    return await body(
      {
        input: io.readStdin ? io.readStdin() : readAll(io.stdin),
        loadHookSet: async () => {
          if (!configPath) throw new UsageError('--config PATH is required (or set HOOKLEDGER_CONFIG)');
          return resources.loadHookSet(configPath);
        },
        openLedger: () => resources.openLedger(args, io),
        createRunner: (options) => runnerFor(args, io, options),
        policy,
        onBackgroundError: (error) => io.stderr.write(`hookledger: background hook outcome not recorded: ${describeThrown(error)}\n`),
      },
      deadlineMs,
    );
  } finally {
    stopOnSignal();
  }
}

const STOP_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
const SIGNAL_NUMBERS: Record<(typeof STOP_SIGNALS)[number], number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

/**
 * Claude Code kills a handler that outlives its `timeout` and discards its answer. The hooks
 * we started run detached in their own process groups, so they would outlive us: kill them,
 * then exit at once. The invocation row stays `running`; the next ledger open marks it
 * `interrupted`. Returns the function that removes the handlers.
 */
export function onStopSignal(io: CliIo): () => void {
  const handler = (signal: (typeof STOP_SIGNALS)[number]) => {
    const killed = killRunningHookProcesses();
    io.stderr.write(`hookledger: ${signal}: exiting${killed > 0 ? `; killed ${killed} running hook process group(s)` : ''}\n`);
    process.exit(128 + SIGNAL_NUMBERS[signal]);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, handler);
  return () => {
    for (const signal of STOP_SIGNALS) process.off(signal, handler);
  };
}

export function parseDeadline(value: string | undefined, io: CliIo): number {
  if (value === undefined) return DEFAULT_BACKGROUND_DEADLINE_MS;
  const n = Number(value);
  if (Number.isInteger(n) && n >= 0) return n;
  // A bad flag must not cost the decision: say so and keep the default.
  io.stderr.write(
    `hookledger: --background-deadline-ms: "${value}" is not a whole number of ms; using ${DEFAULT_BACKGROUND_DEADLINE_MS}\n`,
  );
  return DEFAULT_BACKGROUND_DEADLINE_MS;
}

export function write(stream: NodeJS.WritableStream, text: string): Promise<void> {
  return new Promise((resolve) => {
    stream.write(text, () => resolve());
  });
}
