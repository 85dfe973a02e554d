import { appendFileSync, existsSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import * as z from 'zod';

/**
 * The files automatic shipping keeps next to the local ledger (docs/ship.md, "Set it once"):
 *
 * - `<ledger>.ship.lock`  the one-shipper lock (ledger/ship-lock.ts);
 * - `<ledger>.ship.again` "ship again": set by every SessionEnd/Stop event, cleared by the shipper
 *                         before each pass, so records committed during a pass get another one;
 * - `<ledger>.ship.log`   one line per shipper start, pass result or failure (kept under 1 MiB:
 *                         the previous megabyte is `<ledger>.ship.log.1`);
 * - `<ledger>.ship.json`  the last attempt and its result, for `hookledger ship --status`.
 *
 * None of them holds the centre's password: URLs are written without it.
 */
export interface AutoShipFiles {
  lock: string;
  again: string;
  log: string;
  status: string;
}

/**
 * The files of the ledger at `ledgerPath`, named after its real path (symlinks, `.` and `..`
 * resolved): one ledger reached through two spellings (a symlinked home, a relative --db) has
 * one lock, so never two shippers, and one mark, log and status. A ledger not created yet is
 * named after its directory's real path.
 */
export function autoShipFiles(ledgerPath: string): AutoShipFiles {
  const real = realLedgerPath(ledgerPath);
  return {
    lock: `${real}.ship.lock`,
    again: `${real}.ship.again`,
    log: `${real}.ship.log`,
    status: `${real}.ship.json`,
  };
}

function realLedgerPath(ledgerPath: string): string {
  const absolute = resolve(ledgerPath);
  try {
    return realpathSync(absolute);
  } catch {
    try {
      return join(realpathSync(dirname(absolute)), basename(absolute));
    } catch {
      return absolute;
    }
  }
}

/** Marks "ship again" (an empty file: creating it is the whole signal). */
export function markShipAgain(files: AutoShipFiles): void {
  writeFileSync(files.again, '', { mode: 0o600 });
}

/** Clears "ship again"; true when it was set. */
export function takeShipAgain(files: AutoShipFiles): boolean {
  if (!existsSync(files.again)) return false;
  rmSync(files.again, { force: true });
  return true;
}

export const shipAgainMarked = (files: AutoShipFiles): boolean => existsSync(files.again);

const LOG_LIMIT_BYTES = 1024 * 1024;

/** Appends one timestamped line to the ship log (the caller's text never holds a password). */
export function logShipLine(files: AutoShipFiles, line: string, now = new Date()): void {
  try {
    if (statSync(files.log).size > LOG_LIMIT_BYTES) renameSync(files.log, `${files.log}.1`);
  } catch {
    // No log yet.
  }
  // One line, and nothing a terminal would act on when someone tails it (server messages are quoted in it).
  // eslint-disable-next-line no-control-regex
  appendFileSync(files.log, `${now.toISOString()} ${line.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')}\n`, { mode: 0o600 });
}

/** The last automatic ship attempt, as `ship --status` shows it. */
export const autoShipStatusSchema = z.object({
  /** The shipper's process id. */
  pid: z.number().int(),
  state: z.enum(['running', 'shipped', 'failed']),
  /** The centre, without its password. */
  to: z.string(),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  /** Passes this shipper made (a "ship again" mark adds one). */
  passes: z.number().int(),
  /** Invocations and links shipped by this shipper so far. */
  invocations: z.number().int(),
  links: z.number().int(),
  /** The source's head at the centre after the last pass, and the ledger's head then. */
  shippedUpTo: z.number().int().nullable(),
  localHead: z.number().int().nullable(),
  /** The failure, one line, when state is `failed`. */
  error: z.string().nullable(),
});
export type AutoShipStatus = z.infer<typeof autoShipStatusSchema>;

export function writeShipStatus(files: AutoShipFiles, status: AutoShipStatus): void {
  const temp = `${files.status}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(status, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, files.status);
}

/** The last status written, or null when no automatic ship ever ran (or the file is unreadable). */
export function readShipStatus(files: AutoShipFiles): AutoShipStatus | null {
  try {
    return autoShipStatusSchema.parse(JSON.parse(readFileSync(files.status, 'utf8')));
  } catch {
    return null;
  }
}
