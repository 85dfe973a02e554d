import type { AgentProtocol } from '../adapters/agent-command.js';
import { decideAgentCommand } from '../adapters/agent-command.js';
import { DEFAULT_BACKGROUND_DEADLINE_MS } from '../adapters/claude.js';
import { OTEL_USAGE, type Command } from './command.js';
import { hookCommandOptions, runHookCommand, write } from './hook-command-flow.js';
import { SHIP_AFTER, shipAfterEvent, shipToUsage } from './ship-after-hook.js';

/**
 * The command-hook command of an agent other than Claude Code (`hookledger codex`,
 * `hookledger gemini`): the same flags and process behaviour as `hookledger claude`, the
 * agent's own payload and answer.
 */
export function agentHookCommand(protocol: AgentProtocol, name: 'codex' | 'gemini', installCommand: string): Command {
  const shipEvents = SHIP_AFTER[name];
  return {
    summary: `${protocol.label} command hook: read the event on stdin, decide, answer in its protocol`,
    usage: `${name} --config PATH [--db PATH] [--on-error deny|allow] [--background-deadline-ms N] [--otel URL] [--ship-to URL]

  Register as the one command hook per event in ${protocol.label}'s configuration
  (hookledger ${installCommand} writes the entries). Reads ${protocol.label}'s hook JSON on stdin,
  runs the hook set, records everything (agent ${protocol.agent}, the event name and the raw
  payload) and answers in ${protocol.label}'s protocol for that event; logs go to stderr.
  docs/agents.md lists every event's answer.

  --config      the hook set (else $HOOKLEDGER_CONFIG): .ts/.js module or JSON file
  --on-error    when hookledger itself cannot decide (bad input, unknown event, bad config,
                ledger unusable): deny (default: exit 2 + reason) or allow; else $HOOKLEDGER_ON_ERROR
  --background-deadline-ms
                after answering, wait at most this long for background hooks (default ${DEFAULT_BACKGROUND_DEADLINE_MS})
${OTEL_USAGE}
${shipToUsage(shipEvents)}`,
    options: hookCommandOptions,
    run: (args, io) =>
      runHookCommand(args, io, async (deps, deadlineMs) => {
        const result = await decideAgentCommand(protocol, deps);
        const { answer } = result;
        // The answer goes out (and is flushed) before background hooks are waited for.
        if (answer.json !== null) await write(io.stdout, `${JSON.stringify(answer.json)}\n`);
        if (answer.stderr !== null) await write(io.stderr, `${answer.stderr}\n`);
        io.answered?.(answer.exitCode);
        await result.finish(deadlineMs);
        await shipAfterEvent(args, io, result.eventName, shipEvents);
        return answer.exitCode;
      }),
  };
}
