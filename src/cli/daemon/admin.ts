import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { StatusReply } from './protocol.js';
import { DAEMON_PROTOCOL } from './socket-place.js';

/** One socket file in the daemon directory and what answered on it. */
export interface DaemonEntry {
  socket: string;
  /** The daemon's status, or null when nothing answers (a file left by a daemon that was killed). */
  status: StatusReply | null;
}

/** Every daemon socket in `dir` with its status. */
export async function listDaemons(dir: string, timeoutMs = 2000): Promise<DaemonEntry[]> {
  if (!existsSync(dir)) return [];
  const sockets = readdirSync(dir)
    .filter((name) => name.endsWith('.sock'))
    .map((name) => join(dir, name));
  return Promise.all(
    sockets.map(async (socket) => {
      const reply = await ask(socket, 'status', timeoutMs);
      return { socket, status: reply !== null && 'pid' in reply ? (reply as StatusReply) : null };
    }),
  );
}

/** Asks the daemon on `socket` to stop (it finishes the events in flight); whether it said yes. */
export async function stopDaemon(socket: string, timeoutMs = 2000): Promise<boolean> {
  const reply = await ask(socket, 'stop', timeoutMs);
  return reply !== null && reply.ok === true;
}

function ask(socket: string, op: 'status' | 'stop', timeoutMs: number): Promise<{ ok?: unknown } | null> {
  return new Promise((resolve) => {
    let text = '';
    const client = connect(socket);
    const timer = setTimeout(() => done(null), timeoutMs);
    const done = (value: { ok?: unknown } | null) => {
      clearTimeout(timer);
      client.destroy();
      resolve(value);
    };
    client.on('connect', () => client.end(`${JSON.stringify({ protocol: DAEMON_PROTOCOL, build: '', op })}\n`));
    client.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const end = text.indexOf('\n');
      if (end < 0) return;
      try {
        done(JSON.parse(text.slice(0, end)) as { ok?: unknown });
      } catch {
        done(null);
      }
    });
    client.on('error', () => done(null));
    client.on('close', () => done(null));
  });
}
