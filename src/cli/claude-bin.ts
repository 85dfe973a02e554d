import './one-event-zod.js';
import { command } from './commands/claude.js';
import { DAEMON_FLAG } from './daemon/socket-place.js';
import { runHookBin } from './hook-bin.js';

/**
 * The entry of dist/bundle/claude-bundle.cjs (see hook-bin.ts): one event in this process, or,
 * started by the launcher (daemon/client.ts) as `claude-local.cjs --hookledger-daemon SOCKET
 * BUILD`, the daemon that decides the following events.
 */
if (process.argv[2] === DAEMON_FLAG) {
  // Loaded only here: the daemon's net and worker_threads stay out of a process that decides one event.
  void import('./daemon/server.js').then(({ runDaemon }) =>
    runDaemon({ name: 'claude', command, socketPath: process.argv[3] ?? '', buildId: process.argv[4] ?? '' }),
  );
} else {
  runHookBin('claude', command);
}
