import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join, resolve } from 'node:path';
import { describeThrown } from '../domain/errors.js';
import { packageRoot } from '../ledger/paths.js';
import { shipperRunning } from '../ledger/ship-lock.js';
import { isPostgresUrl, passwordInFlag } from '../ledger/postgres/url.js';
import { autoShipFiles, logShipLine, markShipAgain, type AutoShipFiles } from './auto-files.js';

/**
 * The hook side of automatic shipping: what `hookledger claude` does after it has answered a
 * SessionEnd or Stop event when a ship target is configured (docs/ship.md, "Set it once").
 * Loaded lazily, only then, so the other events never pay for it.
 *
 * It marks "ship again", and starts a detached `hookledger ship --background` unless a shipper
 * already holds the ledger's lock (that one sees the mark and makes one more pass). It never
 * waits for the shipper and never throws: the decision is already out.
 */

export type AutoShipTrigger =
  | { started: true; pid: number | undefined }
  | { started: false; reason: 'shipper_running' | 'not_sqlite' | 'password_in_flag' | 'failed'; message: string };

export interface AutoShipTriggerOptions {
  /** The local ledger the hook recorded to. */
  ledgerPath: string;
  /** The centre: `--ship-to` (never with a password) or `$HOOKLEDGER_SHIP_TO` (may carry one). */
  url: string;
  /** Whether `url` came from a command-line flag (a password there is refused, as `ship --to` refuses it). */
  fromFlag: boolean;
  /** The environment the shipper inherits (PGPASSWORD, PGPASSFILE, HOME for ~/.pgpass). */
  env: NodeJS.ProcessEnv;
}

const SHIPPER_NICE = 10;

/** The CLI the shipper runs: the package's own, whether this code runs from dist/, the bundle or src/. */
const cliPath = () => join(packageRoot, 'bin', 'hookledger.js');

export function triggerAutoShip(options: AutoShipTriggerOptions): AutoShipTrigger {
  const { url } = options;
  if (options.ledgerPath === ':memory:' || isPostgresUrl(options.ledgerPath))
    return { started: false, reason: 'not_sqlite', message: 'ship: the ledger is not a local SQLite file; nothing to ship' };
  if (!isPostgresUrl(url))
    return {
      started: false,
      reason: 'failed',
      message: `ship: the target must be a postgres:// URL, not ${JSON.stringify(url.slice(0, 80))}`,
    };
  const withPassword = options.fromFlag ? passwordInFlag('ship: --ship-to', url) : null;
  if (withPassword) return { started: false, reason: 'password_in_flag', message: `${withPassword}; not shipping` };
  const ledgerPath = resolve(options.ledgerPath);
  const files = autoShipFiles(ledgerPath);
  try {
    // Mark first, then look for a shipper: a shipper that lets its lock go checks the mark
    // afterwards, so either it sees this mark or this look sees its lock free.
    markShipAgain(files);
    if (shipperRunning(files.locks))
      return { started: false, reason: 'shipper_running', message: 'ship: a shipper is running; it ships these records too' };
    return { started: true, pid: startBackgroundShipper({ ledgerPath, files, url, env: options.env }) };
  } catch (error) {
    return { started: false, reason: 'failed', message: `ship: could not start the shipper: ${describeThrown(error)}` };
  }
}

/**
 * Starts `hookledger ship --background` for the ledger, detached, at nice 10, its output appended
 * to the ship log; returns its pid. Also what a `ship` that ends with "ship again" set does
 * (one-shipper.ts). The URL travels in the environment, never in argv (/proc/PID/cmdline shows
 * argv to everyone).
 */
export function startBackgroundShipper(options: {
  ledgerPath: string;
  files: AutoShipFiles;
  url: string;
  env: NodeJS.ProcessEnv;
}): number | undefined {
  const { files } = options;
  const log = openSync(files.log, 'a', 0o600);
  try {
    const child = spawn(process.execPath, [cliPath(), 'ship', '--background', '--db', options.ledgerPath], {
      detached: true,
      stdio: ['ignore', log, log],
      env: { ...options.env, HOOKLEDGER_SHIP_TO: options.url },
      windowsHide: true,
    });
    child.on('error', (error) => logShipLine(files, `could not start the shipper: ${describeThrown(error)}`));
    child.unref();
    // Background work: it must not take CPU from the agent's next hooks (nice 10; best effort).
    if (child.pid !== undefined) {
      try {
        setPriority(child.pid, SHIPPER_NICE);
      } catch {
        // Not permitted here: it runs at the hook's priority.
      }
    }
    return child.pid;
  } finally {
    closeSync(log);
  }
}
