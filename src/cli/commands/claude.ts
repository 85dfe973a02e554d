import { decideClaudeCommand, DEFAULT_BACKGROUND_DEADLINE_MS, resolveOnErrorPolicy } from '../../adapters/claude.js';
import { claudeStdout } from '../../adapters/claude-output.js';
import { loadHookSet } from '../../config/load.js';
import { describeThrown, UsageError } from '../../domain/errors.js';
import { killRunningHookProcesses } from '../../runtimes/process-groups.js';
import { configOption, OTEL_USAGE, otelOption, stringFlag, type Command } from '../command.js';
import { openLedgerFor, runnerFor } from '../context.js';
import { readAll, type CliIo } from '../io.js';

export const command: Command = {
  summary: 'Claude Code command hook: read the event on stdin, decide, answer in its format',
  usage: `claude --config PATH [--db PATH] [--on-error deny|allow] [--background-deadline-ms N] [--otel URL]

  Register as the one command hook per event in .claude/settings.json (hookledger
  install-claude writes the entries). Reads Claude Code's hook JSON on stdin, runs the hook
  set, records everything (with the raw payload) and prints exactly one JSON object in
  Claude Code's format for that event; logs go to stderr. Exit 0 (2 only where Claude Code
  has no JSON form for a block). Never exits 1.

  --config      the hook set (else $HOOKLEDGER_CONFIG): .ts/.js module or JSON file
  --on-error    when hookledger itself cannot decide a blocking event (bad config, ledger
                unusable, invalid input): deny (default) or allow; else $HOOKLEDGER_ON_ERROR
  --background-deadline-ms
                after printing the answer, wait at most this long for background hooks
                (default ${DEFAULT_BACKGROUND_DEADLINE_MS}); use \`hookledger serve\` for long ones
${OTEL_USAGE}
                (flushed before exit, at most $HOOKLEDGER_OTEL_FLUSH_MS, default 1000 ms)`,
  options: {
    db: { type: 'string' },
    ...configOption,
    ...otelOption,
    'on-error': { type: 'string' },
    'background-deadline-ms': { type: 'string' },
  },
  async run(args, io) {
    const { policy, problem } = resolveOnErrorPolicy(stringFlag(args, 'on-error'), io.env);
    if (problem) io.stderr.write(`hookledger: ${problem}\n`);
    const deadlineMs = parseDeadline(stringFlag(args, 'background-deadline-ms'), io);
    const configPath = stringFlag(args, 'config') ?? io.env.HOOKLEDGER_CONFIG;
    const stopOnSignal = onStopSignal(io);
    try {
      const result = await decideClaudeCommand({
        input: readAll(io.stdin),
        loadHookSet: async () => {
          if (!configPath) throw new UsageError('--config PATH is required (or set HOOKLEDGER_CONFIG)');
          return loadHookSet(configPath);
        },
        openLedger: () => openLedgerFor(args, io),
        createRunner: (options) => runnerFor(args, io, options),
        policy,
        onBackgroundError: (error) => io.stderr.write(`hookledger: background hook outcome not recorded: ${describeThrown(error)}\n`),
      });

      const { answer } = result;
      // The answer goes out (and is flushed) before background hooks are waited for.
      await write(io.stdout, claudeStdout(answer));
      if (answer.stderr !== null) await write(io.stderr, `${answer.stderr}\n`);
      await result.finish(deadlineMs);
      return answer.exitCode;
    } finally {
      stopOnSignal();
    }
  },
};

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
