import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { LedgerError } from '../domain/errors.js';
import { stopCheckpointer } from './checkpoint.js';
import { describeSqliteError, isProcessAlive } from './sqlite-errors.js';
import { migrationsFolder } from './paths.js';

/** How the ledger trades durability for speed; see the README's reliability section. */
export type SyncMode = 'normal' | 'full';

export interface OpenLedgerOptions {
  /** A file path, or `:memory:`. */
  path: string;
  /** `normal` (default): safe against process crashes, WAL; `full`: also against power loss, slower. */
  synchronous?: SyncMode;
  /** How long a writer waits for another process's lock before failing, ms. Default 10000. */
  busyTimeoutMs?: number;
  /** Create the parent directory when missing (the CLI does this only for the default path). */
  createDirectory?: boolean;
  /** Open without writing: no migrations, no recovery. */
  readonly?: boolean;
  /** SQLite's page cache, KiB (default SQLite's, ~2 MB). A one-pass reader (export) sets it small. */
  cacheSizeKiB?: number;
}

/**
 * An open ledger: the connection its prepared statements run on. Rows and column names are
 * typed from the drizzle schema (ledger/schema.ts, ledger/rows.ts); no query builder runs on
 * the per-invocation or report paths (measured: rebuilding a query per call costs more than
 * the indexed reads it makes).
 */
export interface Ledger {
  readonly path: string;
  readonly sqlite: Database.Database;
  /** What recovery did on open. */
  readonly recovered: { invocations: number; outcomes: number };
  close(): void;
}

interface Journal {
  entries: { idx: number; tag: string }[];
}

/**
 * Opens (creating if needed) a ledger: WAL, busy timeout, foreign keys, migrations applied
 * under an immediate transaction so that parallel first opens do not race, then recovery of
 * work left `running`/`pending` by processes that no longer exist.
 */
export function openLedger(options: OpenLedgerOptions): Ledger {
  const path = options.path === ':memory:' ? options.path : resolve(options.path);
  if (path !== ':memory:') {
    const dir = dirname(path);
    if (!existsSync(dir)) {
      if (!options.createDirectory)
        throw new LedgerError('ledger_missing_directory', `cannot open ledger ${path}: directory ${dir} does not exist`);
      mkdirSync(dir, { recursive: true });
    }
  }
  let sqlite: Database.Database;
  try {
    sqlite = new Database(path, { readonly: options.readonly ?? false, fileMustExist: options.readonly ?? false });
  } catch (error) {
    throw new LedgerError('ledger_open_failed', `cannot open ledger ${path}: ${describeSqliteError(error)}`, { cause: error });
  }
  try {
    sqlite.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 10_000}`);
    if (!options.readonly) {
      sqlite.pragma('journal_mode = WAL');
      sqlite.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
    }
    sqlite.pragma('foreign_keys = ON');
    if (options.cacheSizeKiB !== undefined) sqlite.pragma(`cache_size = -${Math.max(1, Math.floor(options.cacheSizeKiB))}`);
    if (!options.readonly) applyMigrations(sqlite);
    const recovered = options.readonly ? { invocations: 0, outcomes: 0 } : recoverDeadWriters(sqlite);
    const close = () => {
      stopCheckpointer(sqlite); // its worker's connection first, so this close checkpoints as the last one
      sqlite.close();
    };
    return { path, sqlite, recovered, close };
  } catch (error) {
    sqlite.close();
    if (error instanceof LedgerError) throw error;
    throw new LedgerError('ledger_open_failed', `cannot open ledger ${path}: ${describeSqliteError(error)}`, { cause: error });
  }
}

/**
 * Applies the SQL files drizzle-kit generated, in journal order, under one IMMEDIATE
 * transaction so that processes opening a new ledger at once do not race. `user_version`
 * counts the files applied: an up-to-date ledger costs one pragma per process start (the
 * Claude Code adapter starts a process per event). drizzle's own migrator is not used
 * because it opens its own transaction, which cannot nest inside the lock.
 */
function applyMigrations(sqlite: Database.Database): void {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as Journal;
  const expected = journal.entries.length;
  const applied = () => sqlite.pragma('user_version', { simple: true }) as number;
  if (applied() === expected) return;
  sqlite
    .transaction(() => {
      const from = applied();
      if (from > expected) {
        throw new LedgerError(
          'ledger_too_new',
          `the ledger was written by a newer hookledger (schema ${from}, this one knows ${expected}); upgrade hookledger`,
        );
      }
      for (const entry of journal.entries.slice(from)) {
        const sql = readFileSync(join(migrationsFolder, `${entry.tag}.sql`), 'utf8');
        for (const statement of sql.split('--> statement-breakpoint')) {
          if (statement.trim() !== '') sqlite.exec(statement);
        }
      }
      sqlite.pragma(`user_version = ${expected}`);
    })
    .immediate();
}

/** Marks `running` invocations and `pending` outcomes of dead processes on this host as `interrupted`. */
function recoverDeadWriters(sqlite: Database.Database): { invocations: number; outcomes: number } {
  const host = hostname();
  const writers = sqlite
    .prepare(
      `SELECT DISTINCT pid FROM invocations WHERE status = 'running' AND host = ?
       UNION SELECT DISTINCT i.pid FROM outcomes o JOIN invocations i ON i.id = o.invocation_id WHERE o.status = 'pending' AND i.host = ?`,
    )
    .pluck()
    .all(host, host) as number[];
  const dead = writers.filter((pid) => !isProcessAlive(pid));
  if (dead.length === 0) return { invocations: 0, outcomes: 0 };
  const markInvocations = sqlite.prepare(
    `UPDATE invocations SET status = 'interrupted', message = coalesce(message, 'process ' || pid || ' ended before the decision was committed')
     WHERE status = 'running' AND host = ? AND pid = ?`,
  );
  const markOutcomes = sqlite.prepare(
    `UPDATE outcomes SET status = 'interrupted', failure_detail = 'process ended before this background hook finished'
     WHERE status = 'pending' AND invocation_id IN (SELECT id FROM invocations WHERE host = ? AND pid = ?)`,
  );
  let invocations = 0;
  let outcomes = 0;
  sqlite
    .transaction(() => {
      for (const pid of dead) {
        invocations += markInvocations.run(host, pid).changes;
        outcomes += markOutcomes.run(host, pid).changes;
      }
    })
    .immediate();
  return { invocations, outcomes };
}
