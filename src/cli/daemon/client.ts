/**
 * The entry of dist/bundle/claude.cjs (and codex.cjs, gemini.cjs), the command `install-claude`
 * (`install-codex`, `install-gemini`) writes: a launcher that hands
 * the event to a long-lived hookledger daemon over a per-user Unix socket, the way eslint_d and
 * prettierd do, and otherwise decides in this process exactly as before.
 *
 * It uses Node built-ins only (a process Claude Code starts per event must not load the
 * bundle to ask the daemon). Every way the daemon can fail — none running, a socket refused, a
 * directory someone else could enter, another protocol or build, a connection that closes
 * without an answer, a daemon whose hook set went stale — ends in the in-process path
 * (claude-local.cjs → the bundle), which decides as `hookledger claude` always did (--on-error
 * and all). After such an event the launcher starts a daemon, detached, when its answer is
 * already written, for the events that follow. docs/claude-code.md "The daemon".
 */
import type * as ChildProcess from 'node:child_process';
import { writeSync } from 'node:fs';
import type * as Net from 'node:net';
import { dirname, join } from 'node:path';
import { readStdinSync } from '../stdin.js';
import type { AnswerReply, EventRequest, RefusalReply } from './protocol.js';
import {
  ACK,
  DAEMON_FLAG,
  DAEMON_PROTOCOL,
  DEFAULT_ACK_MS,
  daemonDir,
  daemonWanted,
  privateDirProblem,
  socketName,
} from './socket-place.js';

/** Set by scripts/build-bundle.ts: a hash of the bundle this launcher belongs to. */
declare const __HOOKLEDGER_BUILD_ID__: string;
/** Set by scripts/build-bundle.ts: whether the daemon is asked when HOOKLEDGER_DAEMON is unset. */
declare const __HOOKLEDGER_DAEMON_DEFAULT__: boolean;
/** Set by scripts/build-bundle.ts: the agent command (`claude`, `codex`, `gemini`). */
declare const __HOOKLEDGER_AGENT__: string;

const AGENT = __HOOKLEDGER_AGENT__;
const LOCAL = join(__dirname, `${AGENT}-local.cjs`);

void main();

async function main(): Promise<void> {
  let input: string;
  try {
    input = await readStdinSync(() => process.stdin);
  } catch {
    // Too large or unreadable: the in-process path reads (what is left of) stdin and says what is wrong.
    return decideHere(null, null);
  }
  if (!daemonWanted(process.env, __HOOKLEDGER_DAEMON_DEFAULT__)) return decideHere(input, null);
  let socketPath: string;
  try {
    const dir = daemonDir(process.env);
    if (privateDirProblem(dir) !== null) return decideHere(input, null);
    socketPath = join(dir, socketName(AGENT, __HOOKLEDGER_BUILD_ID__, __dirname));
  } catch {
    return decideHere(input, null);
  }
  const ackMs = Number(process.env.HOOKLEDGER_DAEMON_ACK_MS) > 0 ? Number(process.env.HOOKLEDGER_DAEMON_ACK_MS) : DEFAULT_ACK_MS;
  const reply = await ask(socketPath, ackMs, {
    protocol: DAEMON_PROTOCOL,
    build: __HOOKLEDGER_BUILD_ID__,
    op: 'event',
    acceptUntil: Date.now() + ackMs / 2,
    argv: process.argv.slice(2),
    cwd: process.cwd(),
    env: process.env as Record<string, string>,
    stdin: input,
  });
  if (reply !== null && reply.ok) {
    await writeAll(1, reply.stdout);
    await writeAll(2, reply.stderr);
    process.exit(reply.exitCode);
  }
  // Another build or protocol on this socket name cannot be replaced by us: only decide. A busy
  // (unacknowledging) daemon is replaced by the one started here: it checks the socket answers a status.
  decideHere(input, reply !== null && reply.reason === 'version' ? null : socketPath);
}

/** Loads the bundle and decides in this process; then, with a socket path, starts a daemon for the next events. */
function decideHere(input: string | null, startDaemonAt: string | null): void {
  if (input !== null) (globalThis as Record<string, unknown>).__hookledgerStdin = input;
  // The bundle exits through process.exit once its answer is flushed; the daemon starts then.
  if (startDaemonAt !== null) process.once('exit', () => startDaemon(startDaemonAt));
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle is CommonJS, loaded only on this path
  require(LOCAL);
}

function startDaemon(socketPath: string): void {
  try {
    builtin<typeof ChildProcess>('node:child_process')
      .spawn(process.execPath, [LOCAL, DAEMON_FLAG, socketPath, __HOOKLEDGER_BUILD_ID__], {
        detached: true,
        stdio: 'ignore',
        cwd: dirname(socketPath),
        env: process.env,
      })
      .unref();
  } catch {
    // The next event tries again; this one is decided.
  }
}

/**
 * A built-in loaded where it is used: `net` (and `child_process`, which loads it) stay out of
 * a process that decides in process, like the bundle before the daemon (bundle.test.ts).
 */
function builtin<T>(name: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- deliberately lazy
  return require(name) as T;
}

/**
 * Sends the request; resolves to the reply, to `busy` when the daemon did not acknowledge it
 * within `ackMs`, or to null when the daemon is absent or went away without an answer.
 */
function ask(socketPath: string, ackMs: number, request: EventRequest): Promise<AnswerReply | RefusalReply | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    let acknowledged = false;
    const settle = (reply: AnswerReply | RefusalReply | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(reply);
    };
    const timer = setTimeout(() => settle({ ok: false, reason: 'busy' }), ackMs);
    const socket = builtin<typeof Net>('node:net').connect(socketPath);
    socket.on('connect', () => socket.end(`${JSON.stringify(request)}\n`));
    socket.on('data', (data: Buffer) => {
      let chunk = data;
      if (!acknowledged && chunk[0] === ACK) {
        // Taken on: from here the daemon decides, however long the hooks take.
        acknowledged = true;
        clearTimeout(timer);
        chunk = chunk.subarray(1);
      }
      chunks.push(chunk);
      if (chunk.includes(10)) settle(parseReply(Buffer.concat(chunks)));
    });
    socket.on('error', () => settle(null));
    socket.on('close', () => settle(null));
  });
}

function parseReply(data: Buffer): AnswerReply | RefusalReply | null {
  try {
    const reply = JSON.parse(data.subarray(0, data.indexOf(10)).toString('utf8')) as {
      ok?: unknown;
      stdout?: unknown;
      stderr?: unknown;
      exitCode?: unknown;
      reason?: unknown;
    };
    if (reply.ok === true && typeof reply.stdout === 'string' && typeof reply.stderr === 'string' && Number.isInteger(reply.exitCode)) {
      return reply as unknown as AnswerReply;
    }
    if (reply.ok === false && typeof reply.reason === 'string') return reply as unknown as RefusalReply;
  } catch {
    // A reply we cannot read is no answer.
  }
  return null;
}

/** Writes all of `text` to a descriptor; one that would block (a full non-blocking pipe) finishes through the process stream. */
function writeAll(fd: 1 | 2, text: string): Promise<void> {
  const data = Buffer.from(text);
  let offset = 0;
  try {
    while (offset < data.length) offset += writeSync(fd, data, offset);
    return Promise.resolve();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return Promise.resolve();
    const stream = fd === 1 ? process.stdout : process.stderr;
    return new Promise((resolve) => stream.write(data.subarray(offset), () => resolve()));
  }
}
