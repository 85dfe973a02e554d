import { lstatSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Where the claude daemon's socket lives and what it is called: shared by the launcher
 * (client.ts), the daemon (server.ts) and `hookledger daemon`. Node built-ins only: the launcher
 * runs in every process Claude Code starts.
 */

/** The version of the launcher ↔ daemon messages (protocol.ts); part of the build id. */
export const DAEMON_PROTOCOL = 2;

/** The byte the daemon sends as soon as it takes an event on (before the reply line; protocol.ts). */
export const ACK = 0x06;

/** The argument that makes a hook bundle run as the daemon: `node claude-local.cjs --hookledger-daemon SOCKET BUILD`. */
export const DAEMON_FLAG = '--hookledger-daemon';

/**
 * How long the launcher waits for the daemon to acknowledge an event before deciding it in
 * process, ms (HOOKLEDGER_DAEMON_ACK_MS): a daemon whose event loop is stuck (an in-process hook
 * in an endless loop) must not hold every event until Claude Code's timeout, which fails open.
 */
export const DEFAULT_ACK_MS = 1000;

/** The default idle time after which the daemon exits, ms (HOOKLEDGER_DAEMON_IDLE_MS). */
export const DEFAULT_IDLE_MS = 10 * 60_000;

/**
 * Whether the launcher asks a daemon: `HOOKLEDGER_DAEMON=off` (or 0/false/no) never, `on` (or
 * 1/true/yes) yes; unset or anything else gives `fallback`.
 */
export function daemonWanted(env: NodeJS.ProcessEnv, fallback: boolean): boolean {
  const value = (env.HOOKLEDGER_DAEMON ?? '').trim().toLowerCase();
  if (['off', '0', 'false', 'no'].includes(value)) return false;
  if (['on', '1', 'true', 'yes'].includes(value)) return true;
  return fallback;
}

/**
 * The per-user directory of daemon sockets: $HOOKLEDGER_DAEMON_DIR, else
 * $XDG_RUNTIME_DIR/hookledger, else <tmpdir>/hookledger-<uid>.
 */
export function daemonDir(env: NodeJS.ProcessEnv): string {
  if (env.HOOKLEDGER_DAEMON_DIR) return env.HOOKLEDGER_DAEMON_DIR;
  const runtime = env.XDG_RUNTIME_DIR;
  if (runtime && runtime.startsWith('/')) return join(runtime, 'hookledger');
  return join(tmpdir(), `hookledger-${process.getuid?.() ?? 'user'}`);
}

/**
 * Creates the directory (0700) when missing and checks, with lstat, that it is a real directory
 * of this user that nobody else can enter. Returns what is wrong, or null: anything else there
 * (another user's directory in a shared /tmp, a symlink, group or world access) means another
 * user could answer in the daemon's place, so the launcher decides in process instead.
 */
export function privateDirProblem(dir: string): string | null {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return `cannot create ${dir}: ${(error as Error).message}`;
  }
  let stats;
  try {
    stats = lstatSync(dir);
  } catch (error) {
    return `cannot stat ${dir}: ${(error as Error).message}`;
  }
  if (!stats.isDirectory()) return `${dir} is not a directory`;
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) return `${dir} belongs to uid ${stats.uid}, not ${uid}`;
  if ((stats.mode & 0o077) !== 0) return `${dir} has mode 0${(stats.mode & 0o777).toString(8)}, not 0700`;
  return null;
}

/**
 * The socket's file name: one daemon per agent, hookledger build, installed copy and Node
 * version, so a new build or an upgraded Node never talks to a daemon running older code, and
 * two copies of the same build (two projects' node_modules) never share one (a daemon loads
 * files beside its bundle, migrations for one, that the other copy's removal would take away).
 */
export function socketName(agent: string, buildId: string, bundleDir: string, nodeVersion: string = process.version): string {
  return `${agent}-${buildId}-${fnv1a(bundleDir)}-${nodeVersion}.sock`;
}

/** FNV-1a, 32 bits, as 8 hex digits: a short stable name for a path, without loading node:crypto. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
