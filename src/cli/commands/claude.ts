import { decideClaudeCommand, DEFAULT_BACKGROUND_DEADLINE_MS } from '../../adapters/claude.js';
import { claudeStdout } from '../../adapters/claude-output.js';
import { OTEL_USAGE, type Command } from '../command.js';
import { hookCommandOptions, runHookCommand, write } from '../hook-command-flow.js';
import { SHIP_AFTER, shipAfterEvent, shipToUsage } from '../ship-after-hook.js';

export const command: Command = {
  summary: 'Claude Code command hook: read the event on stdin, decide, answer in its format',
  usage: `claude --config PATH [--db PATH] [--on-error deny|allow] [--background-deadline-ms N] [--otel URL] [--ship-to URL]

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
                (flushed before exit, at most $HOOKLEDGER_OTEL_FLUSH_MS, default 1000 ms)
${shipToUsage(SHIP_AFTER.claude)}`,
  options: hookCommandOptions,
  run: (args, io) =>
    runHookCommand(args, io, async (deps, deadlineMs) => {
      const result = await decideClaudeCommand(deps);
      const { answer } = result;
      // The answer goes out (and is flushed) before background hooks are waited for.
      await write(io.stdout, claudeStdout(answer));
      if (answer.stderr !== null) await write(io.stderr, `${answer.stderr}\n`);
      io.answered?.(answer.exitCode);
      await result.finish(deadlineMs);
      // Automatic shipping: only on these events, only when a target is set, after the answer and the background hooks.
      await shipAfterEvent(args, io, result.eventName, SHIP_AFTER.claude);
      return answer.exitCode;
    }),
};
