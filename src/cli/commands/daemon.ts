import { UsageError } from '../../domain/errors.js';
import { escapeControls } from '../../reports/controls.js';
import { boolFlag, type Command } from '../command.js';
import { listDaemons, stopDaemon } from '../daemon/admin.js';
import { daemonDir } from '../daemon/socket-place.js';
import { writeJson } from '../io.js';

export const command: Command = {
  summary: "the daemon that decides Claude Code's (Codex's, Gemini CLI's) events without a Node start-up each: status, stop",
  usage: `daemon status [--json] | daemon stop

  The commands install-claude, install-codex and install-gemini write ask a long-lived
  hookledger process (started by the first event; one per user, agent, hookledger build and
  Node version) to decide each event, and decide in their own process when there is none
  (docs/claude-code.md "The daemon").
  status   every daemon of this user: pid, build, events decided, open ledgers, loaded configs
  stop     asks each to exit once its events in flight are decided; the next event starts one
  Sockets live in $HOOKLEDGER_DAEMON_DIR, else $XDG_RUNTIME_DIR/hookledger, else
  <tmp>/hookledger-<uid>. HOOKLEDGER_DAEMON=off turns it off; HOOKLEDGER_DAEMON_IDLE_MS sets
  how long one waits without events before exiting (default 600000).`,
  options: { json: { type: 'boolean' } },
  async run(args, io) {
    const action = args.positionals[0];
    const dir = daemonDir(io.env);
    const daemons = await listDaemons(dir);
    if (action === 'status') {
      if (boolFlag(args, 'json')) {
        writeJson(io, { dir, daemons });
        return 0;
      }
      if (daemons.length === 0) io.stdout.write(`no hookledger daemon (${escapeControls(dir, false)})\n`);
      for (const { socket, status } of daemons) {
        if (status === null) {
          io.stdout.write(`${escapeControls(socket, false)}: not answering (left by a daemon that was killed; the next one replaces it)\n`);
          continue;
        }
        const minutes = ((Date.now() - status.startedAt) / 60_000).toFixed(1);
        io.stdout.write(
          `${status.agent}, pid ${status.pid}: build ${status.build}, node ${status.node}, up ${minutes} min, ${status.events} event(s), ${status.inFlight} in flight, idle exit after ${status.idleMs} ms\n` +
            status.ledgers.map((l) => `  ledger ${escapeControls(l, false)}\n`).join('') +
            status.configs.map((c) => `  config ${escapeControls(c, false)}\n`).join(''),
        );
      }
      return 0;
    }
    if (action === 'stop') {
      let stopped = 0;
      for (const { socket, status } of daemons) if (status !== null && (await stopDaemon(socket))) stopped += 1;
      io.stdout.write(`stopped ${stopped} daemon(s)\n`);
      return 0;
    }
    throw new UsageError(`daemon: expected "status" or "stop"${action === undefined ? '' : `, not "${escapeControls(action, false)}"`}`);
  },
};
