import { closeSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { describeThrown } from '../../domain/errors.js';
import { isPostgresUrl } from '../../ledger/ledger.js';
import { withEventEnvironment } from '../../runtimes/event-environment.js';
import { importUserModulesOnly } from '../../runtimes/import-module.js';
import type { Command, CommandArgs } from '../command.js';
import { runHookArgv } from '../hook-bin.js';
import { useHookCommandResources } from '../hook-command-flow.js';
import type { CliIo } from '../io.js';
import { DaemonCache, fileIdentity } from './cache.js';
import { watchModuleFiles } from './module-files.js';
import {
  daemonRequestSchema,
  MAX_REQUEST_BYTES,
  type AnswerReply,
  type DaemonRequest,
  type EventRequest,
  type RefusalReply,
  type StatusReply,
} from './protocol.js';
import { ACK, DAEMON_PROTOCOL, DEFAULT_IDLE_MS } from './socket-place.js';

/** How often the daemon checks that the socket path is still its own (another daemon may have replaced it). */
const OWNERSHIP_CHECK_MS = 1000;

export interface DaemonOptions {
  /** The agent command this daemon runs (`claude`). */
  name: string;
  command: Command;
  socketPath: string;
  buildId: string;
}

/**
 * The long-lived side of the claude launcher (client.ts): listens on the per-user socket and
 * runs each event through the same command code as a process per event (runHookArgv →
 * commands/claude.ts → runHookCommand), with the client's argv, environment and directory, its
 * stdin, and stdout/stderr captured. It replies as soon as the command has written its answer
 * (durable before the answer, as always); background hooks and ship-after go on here. Ledgers
 * stay open and hook sets loaded between events (cache.ts); a changed hook-set file makes it
 * hand the event back ("stale") and exit. It exits after HOOKLEDGER_DAEMON_IDLE_MS without
 * events (default 10 min), on `hookledger daemon stop`, and when another daemon took its socket.
 */
export async function runDaemon(options: DaemonOptions): Promise<void> {
  const log = daemonLog(`${options.socketPath}.log`);
  const idleMs = idleMsFrom(process.env);
  let modules;
  try {
    modules = watchModuleFiles();
  } catch (error) {
    // Without the load hook a changed imported module would go unseen: no daemon (clients decide in process).
    log(`not starting: ${describeThrown(error)}`);
    process.exit(0);
  }
  importUserModulesOnly();
  const cache = new DaemonCache(modules);
  useHookCommandResources(cache);

  const startedAt = Date.now();
  let events = 0;
  let inFlight = 0;
  let closing = false;
  let idleTimer: NodeJS.Timeout | null = null;
  const armIdle = () => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = inFlight === 0 && !closing ? setTimeout(() => shutdown(`idle for ${idleMs} ms`), idleMs) : null;
  };

  const server = createServer({ allowHalfOpen: true }, (socket) => {
    readRequest(socket, (request) => {
      if (request === null) return reply(socket, { ok: false, reason: 'bad-request' });
      // Status and stop work across builds (`hookledger daemon` of any build manages them all); events do not.
      if (request.protocol !== DAEMON_PROTOCOL || (request.op === 'event' && request.build !== options.buildId)) {
        return reply(socket, { ok: false, reason: 'version' });
      }
      if (request.op === 'status') {
        const status: StatusReply = {
          ok: true,
          agent: options.name,
          pid: process.pid,
          build: options.buildId,
          node: process.version,
          startedAt,
          events,
          inFlight,
          idleMs,
          ...cache.describe(),
        };
        return reply(socket, status);
      }
      if (request.op === 'stop') {
        reply(socket, { ok: true, stdout: '', stderr: '', exitCode: 0 });
        return shutdown('stopped by request');
      }
      if (closing) return reply(socket, { ok: false, reason: 'closing' });
      // The launcher stops waiting soon after acceptUntil and decides itself: never decide it here too.
      if (Date.now() > request.acceptUntil) return reply(socket, { ok: false, reason: 'late' });
      socket.write(Buffer.of(ACK));
      const stale = cache.staleness();
      if (stale !== null) {
        // Stop listening before answering, so the fresh daemon the client starts can take the socket.
        shutdown(`hook set out of date: ${stale}`);
        return reply(socket, { ok: false, reason: 'stale' });
      }
      events += 1;
      inFlight += 1;
      armIdle();
      void decide(options, request, (answer) => reply(socket, answer), log).finally(() => {
        inFlight -= 1;
        armIdle();
        if (closing && inFlight === 0) void exit();
      });
    });
  });
  server.on('error', (error) => log(`server error: ${describeThrown(error)}`));

  let ownIdentity: string | null = null;
  try {
    ownIdentity = await listenExclusively(server, options.socketPath);
  } catch (error) {
    log(`not starting: ${describeThrown(error)}`);
    process.exit(0);
  }
  if (ownIdentity === null) {
    log('another daemon answers on this socket; exiting');
    process.exit(0);
  }
  log(`listening on ${options.socketPath} (pid ${process.pid}, node ${process.version}, build ${options.buildId}, idle exit ${idleMs} ms)`);
  armIdle();
  const ownership = setInterval(() => {
    if (fileIdentity(options.socketPath) !== ownIdentity) shutdown('the socket was replaced or removed');
  }, OWNERSHIP_CHECK_MS);
  ownership.unref();

  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));
  process.on('uncaughtException', (error) => {
    log(`uncaught: ${describeThrown(error)}`);
    shutdown('uncaught exception');
  });
  process.on('unhandledRejection', (error) => log(`unhandled rejection: ${describeThrown(error)}`));

  function shutdown(reason: string): void {
    if (closing) return;
    closing = true;
    log(`exiting: ${reason}`);
    clearInterval(ownership);
    if (idleTimer) clearTimeout(idleTimer);
    // Only our own socket file: a daemon that was replaced must not remove its successor's.
    if (fileIdentity(options.socketPath) === ownIdentity) {
      try {
        unlinkSync(options.socketPath);
      } catch {
        // Already gone.
      }
    }
    server.close();
    if (inFlight === 0) void exit();
  }

  async function exit(): Promise<void> {
    await cache.close();
    process.exit(0);
  }
}

/** Runs one event as the command would in its own process; `answer` is called once. */
async function decide(options: DaemonOptions, request: EventRequest, answer: (reply: AnswerReply) => void, log: (line: string) => void) {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let answered = false;
  const send = (exitCode: number) => {
    if (answered) return;
    answered = true;
    answer({ ok: true, stdout: stdout.join(''), stderr: stderr.join(''), exitCode });
  };
  // What the command writes after its answer (background hooks' complaints) goes to the daemon's log.
  const capture = (into: string[], label: string) =>
    new Writable({
      write(chunk: Buffer | string, _encoding, callback) {
        const text = chunk.toString();
        if (answered) {
          if (text.trim() !== '') log(`${label}: ${text.trimEnd()}`);
        } else into.push(text);
        callback();
      },
    });
  const cwd = request.cwd;
  const env = absoluteEnv(request.env, cwd);
  const io: CliIo = {
    stdout: capture(stdout, 'stdout after the answer'),
    stderr: capture(stderr, 'stderr after the answer'),
    stdin: Readable.from([]),
    env,
    readStdin: () => Promise.resolve(request.stdin),
    answered: send,
  };
  const code = await withEventEnvironment({ env, cwd }, () =>
    runHookArgv(options.name, options.command, request.argv, io, (args) => absolutePaths(args, cwd)),
  );
  send(code);
}

/**
 * Relative paths in the flags and variables the command reads mean the client's directory,
 * which the daemon (one process for every project) does not share.
 */
function absolutePaths(args: CommandArgs, cwd: string): CommandArgs {
  const values = { ...args.values };
  for (const name of ['config', 'db']) {
    const value = values[name];
    if (typeof value === 'string') values[name] = absoluteIn(value, cwd);
  }
  return { ...args, values };
}

function absoluteEnv(env: Record<string, string>, cwd: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const name of ['HOOKLEDGER_CONFIG', 'HOOKLEDGER_DB']) {
    const value = out[name];
    if (value !== undefined) out[name] = absoluteIn(value, cwd);
  }
  return out;
}

function absoluteIn(value: string, cwd: string): string {
  if (value === '' || value === ':memory:' || isPostgresUrl(value)) return value;
  return resolve(cwd, value);
}

/** Reads one request (a JSON line, up to MAX_REQUEST_BYTES); null when it is not one. */
function readRequest(socket: Socket, then: (request: DaemonRequest | null) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    let request: DaemonRequest | null;
    try {
      const text = Buffer.concat(chunks).toString('utf8');
      const line = text.slice(0, text.indexOf('\n') >= 0 ? text.indexOf('\n') : text.length);
      const parsed = daemonRequestSchema.safeParse(JSON.parse(line));
      request = parsed.success ? parsed.data : null;
    } catch {
      request = null;
    }
    then(request);
  };
  socket.on('data', (chunk: Buffer) => {
    if (done) return;
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) {
      done = true;
      socket.destroy();
      return;
    }
    chunks.push(chunk);
    if (chunk.includes(10)) finish();
  });
  socket.on('end', finish);
  // A client that went away (Claude Code's timeout killed it) changes nothing: the event is decided and recorded.
  socket.on('error', () => {});
}

function reply(socket: Socket, message: AnswerReply | RefusalReply | StatusReply): void {
  if (socket.destroyed) return;
  socket.end(`${JSON.stringify(message)}\n`);
}

/**
 * Listens on a fresh name beside `path` and renames it into place, unless a daemon already
 * answers there: the rename replaces a socket file left by a daemon that died (SIGKILL) without
 * a window where the path is missing, and the name the listener unlinks when it closes is its
 * own. Two daemons starting at once may both rename; the one replaced sees it (the periodic
 * ownership check) and exits, so one remains. Resolves to the socket file's identity, or null
 * when another daemon answers.
 */
async function listenExclusively(server: Server, path: string): Promise<string | null> {
  if (await answers(path)) return null;
  const fresh = `${path}.${process.pid}`;
  try {
    unlinkSync(fresh);
  } catch {
    // None left from an earlier process with our pid.
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(fresh, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const identity = fileIdentity(fresh);
  if (await answers(path)) {
    server.close();
    return null;
  }
  renameSync(fresh, path);
  return identity;
}

/**
 * Whether a daemon answers on the socket at `path`: a status reply within a second. A socket
 * that accepts but never replies belongs to a daemon whose event loop is stuck: it is replaced.
 */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path);
    const done = (alive: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(alive);
    };
    const timer = setTimeout(() => done(false), 1000);
    socket.on('connect', () => socket.end(`${JSON.stringify({ protocol: DAEMON_PROTOCOL, build: '', op: 'status' })}\n`));
    socket.on('data', () => done(true));
    socket.on('error', () => done(false));
    socket.on('close', () => done(false));
  });
}

function idleMsFrom(env: NodeJS.ProcessEnv): number {
  const value = Number(env.HOOKLEDGER_DAEMON_IDLE_MS);
  return Number.isInteger(value) && value > 0 ? value : DEFAULT_IDLE_MS;
}

/** Appends timestamped lines to the daemon's log (beside its socket, 0600); a log that cannot be written is skipped. */
function daemonLog(path: string): (line: string) => void {
  let fd: number | null = null;
  try {
    fd = openSync(path, 'w', 0o600);
  } catch {
    fd = null;
  }
  return (line) => {
    if (fd === null) return;
    try {
      writeSync(fd, `${new Date().toISOString()} ${line.replaceAll('\n', '\n  ')}\n`);
    } catch {
      closeSync(fd);
      fd = null;
    }
  };
}
