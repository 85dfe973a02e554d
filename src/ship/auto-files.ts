import { appendFileSync, existsSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import * as z from 'zod';

/**
 * The files every shipper of a ledger shares (docs/ship.md, "One shipper per ledger"):
 *
 * - `<ledger>.ship.lock`  the one-shipper lock (ledger/ship-lock.ts), held by every shipper;
 * - `<ledger>.ship.again` "ship again": set by every end-of-turn/session event, cleared by the shipper
 *                         before each pass, so records committed during a pass get another one;
 * - `<ledger>.ship.log`   one line per shipper start, pass result or failure (kept under 1 MiB:
 *                         the previous megabyte is `<ledger>.ship.log.1`);
 * - `<ledger>.ship.json`  the last automatic attempt and its result, for `hookledger ship --status`.
 *
 * `<ledger>` is the ledger's real path. The lock and the mark have a second name, by the ledger
 * file's identity (device and inode): `~/.hookledger/ship-locks/<dev>-<ino>.lock` and `.again`,
 * so a ledger reached through a hard link (or a bind mount of the file) has one lock too.
 * Shippers take both locks and events set both marks (see `autoShipFiles`).
 *
 * None of them holds the centre's password: URLs are written without it.
 */
export interface AutoShipFiles {
  /** The lock files, all held by the one shipper: by real path, then by identity when it can be named. */
  locks: string[];
  /** The "ship again" marks, likewise: an event sets all, a shipper clears all. */
  marks: string[];
  log: string;
  status: string;
}

/**
 * The files of the ledger at `ledgerPath`. By its real path (symlinks, `.` and `..` resolved):
 * one ledger reached through two spellings (a symlinked home, a relative --db) has one lock, mark,
 * log and status. By its identity as well, when the file exists and `~/.hookledger/ship-locks`
 * can be made: hard links have different real paths but one identity. Each name covers what the
 * other cannot: the identity's directory is per home directory (two callers with different HOMEs
 * share the path name), a hard link's path differs (they share the identity name).
 */
export function autoShipFiles(ledgerPath: string): AutoShipFiles {
  const real = realLedgerPath(ledgerPath);
  const byIdentity = identityName(real);
  return {
    locks: [`${real}.ship.lock`, ...(byIdentity ? [`${byIdentity}.lock`] : [])],
    marks: [`${real}.ship.again`, ...(byIdentity ? [`${byIdentity}.again`] : [])],
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

/** `~/.hookledger/ship-locks/<dev>-<ino>` of an existing ledger file; null when it does not exist or the directory cannot be made. */
function identityName(realPath: string): string | null {
  try {
    const { dev, ino } = statSync(realPath, { bigint: true });
    const dir = join(homedir(), '.hookledger', 'ship-locks');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    return join(dir, `${dev}-${ino}`);
  } catch {
    return null;
  }
}

/** Marks "ship again" (empty files: creating them is the whole signal). */
export function markShipAgain(files: AutoShipFiles): void {
  for (const mark of files.marks) writeFileSync(mark, '', { mode: 0o600 });
}

/** Clears "ship again"; true when it was set. */
export function takeShipAgain(files: AutoShipFiles): boolean {
  let marked = false;
  for (const mark of files.marks) {
    if (!existsSync(mark)) continue;
    marked = true;
    rmSync(mark, { force: true });
  }
  return marked;
}

export const shipAgainMarked = (files: AutoShipFiles): boolean => files.marks.some((mark) => existsSync(mark));

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
