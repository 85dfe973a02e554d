import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root, found from this file whether it runs from src/ (tsx, vitest) or dist/. */
export const packageRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Where drizzle-kit writes the SQL migrations that `openLedger` applies. */
export const migrationsFolder = join(packageRoot, 'migrations');

/**
 * `--db`, else `HOOKLEDGER_DB`, else `~/.hookledger/ledger.db` (one ledger for all of a user's sessions).
 * Home is the given environment's HOME, so a caller (or a test) that passes its own environment
 * never reaches the real user's ledger.
 */
export function resolveLedgerPath(explicit?: string | null, env: NodeJS.ProcessEnv = process.env): { path: string; isDefault: boolean } {
  if (explicit) return { path: explicit, isDefault: false };
  if (env.HOOKLEDGER_DB) return { path: env.HOOKLEDGER_DB, isDefault: false };
  return { path: join(env.HOME || homedir(), '.hookledger', 'ledger.db'), isDefault: true };
}
