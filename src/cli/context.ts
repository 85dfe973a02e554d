import { UsageError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import { loadHookSet } from '../config/load.js';
import { openLedger, type Ledger, type SqliteOpenOptions } from '../ledger/ledger.js';
import { resolveLedgerPath } from '../ledger/paths.js';
import { stringFlag, type CommandArgs } from './command.js';
import type { CliIo } from './io.js';

/**
 * Opens the ledger named by `--db`, `HOOKLEDGER_DB` or the default path (whose directory is
 * created). A PostgreSQL URL there opens PostgreSQL (openLedger chooses); the SQLite options
 * below are then unused.
 */
export function openLedgerFor(args: CommandArgs, io: CliIo, options: Partial<SqliteOpenOptions> = {}): Promise<Ledger> {
  const { path, isDefault } = resolveLedgerPath(stringFlag(args, 'db'), io.env);
  const synchronous = io.env.HOOKLEDGER_SYNC === 'full' ? 'full' : 'normal';
  // How long to wait for another process's write lock; a malformed value keeps the default.
  const busy = io.env.HOOKLEDGER_BUSY_TIMEOUT_MS;
  const busyTimeoutMs = busy !== undefined && /^\d+$/.test(busy.trim()) ? Number(busy) : undefined;
  return openLedger({
    path,
    createDirectory: isDefault,
    synchronous,
    ...(busyTimeoutMs !== undefined ? { busyTimeoutMs } : {}),
    ...options,
  });
}

/** Loads the hook set named by `--config` (else `HOOKLEDGER_CONFIG`). */
export async function hookSetFor(args: CommandArgs, io: CliIo): Promise<HookSet> {
  const path = stringFlag(args, 'config') ?? io.env.HOOKLEDGER_CONFIG;
  if (!path) throw new UsageError('--config PATH is required (a .ts/.js module exporting defineHooks(...), or a JSON hook set)');
  return loadHookSet(path);
}
