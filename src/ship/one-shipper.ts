import { setTimeout as delay } from 'node:timers/promises';
import { LedgerError } from '../domain/errors.js';
import { ShipperLock, shipperHolder, type ShipperHolder } from '../ledger/ship-lock.js';
import { autoShipFiles, shipAgainMarked, takeShipAgain, type AutoShipFiles } from './auto-files.js';
import { startBackgroundShipper } from './auto-trigger.js';

/**
 * One shipper per ledger for `hookledger ship` and `ship --follow` (docs/ship.md, "One shipper
 * per ledger"): they take the ledger's shipper lock as the background shipper does, so that a
 * hook's automatic shipper, serve's follower and a manual `ship` never run side by side.
 *
 * - another shipper that will finish (a `ship`, a background shipper) is waited for, said once in
 *   one line with its pid;
 * - one that does not finish (a `ship --follow`, serve's) makes a manual `ship` refuse in one line
 *   with its pid (exit 3): that follower ships these records. Serve's follower (`patient`) waits
 *   for anyone, a manual follower included, instead of ending and being restarted.
 *
 * The holder clears "ship again" when it takes the lock (its run ships what was committed
 * before), and looks at it again after letting the lock go: an event that found the lock held
 * set it and started nothing, so a mark seen then starts the background shipper, as the event
 * would have (`release`).
 */
export interface LedgerShipper {
  readonly files: AutoShipFiles;
  /** Lets the lock go; a "ship again" mark set meanwhile starts the background shipper. */
  release(): void;
}

export interface TakeLedgerOptions {
  ledgerPath: string;
  /** What the holder file says this shipper is. */
  command: 'ship' | 'ship --follow';
  /** Wait for a follower too (serve's follower), instead of refusing. */
  patient: boolean;
  /** The centre: the background shipper started by `release` ships there (it may carry the password: environment only). */
  url: string;
  env: NodeJS.ProcessEnv;
  /** Stops the wait: then null. */
  signal?: AbortSignal;
  /** The one line saying whom this shipper waits for. */
  notice: (line: string) => void;
}

const RETRY_MS = 250;

/** Takes the ledger's shipper lock, waiting as described above; null when `signal` stopped the wait. */
export async function takeLedgerForShipping(options: TakeLedgerOptions): Promise<LedgerShipper | null> {
  const files = autoShipFiles(options.ledgerPath);
  let told = false;
  for (;;) {
    // A wait of its own: probes hold a lock file for an instant.
    const lock = ShipperLock.tryAcquire(files.locks, RETRY_MS, options.command);
    if (lock) {
      takeShipAgain(files);
      return {
        files,
        release: () => {
          lock.release();
          // Started whenever the mark is set: a shipper that holds the lock by then makes it leave at once, while a
          // look here could see a probe's instant and take it for a shipper.
          if (shipAgainMarked(files)) startBackgroundShipper({ ledgerPath: options.ledgerPath, files, url: options.url, env: options.env });
        },
      };
    }
    if (options.signal?.aborted) return null;
    const holder = shipperHolder(files.locks);
    if (holder?.command === 'ship --follow' && !options.patient)
      throw new LedgerError(
        'ledger_ship_busy',
        `another shipper (${describeHolder(holder)}) holds ${options.ledgerPath} and keeps shipping it: it ships these records; stop it to ship from here`,
      );
    if (!told) options.notice(`another shipper (${describeHolder(holder)}) holds ${options.ledgerPath}; waiting for it`);
    told = true;
    await delay(RETRY_MS, undefined, options.signal ? { signal: options.signal } : {}).catch(() => undefined);
  }
}

const describeHolder = (holder: ShipperHolder | null) => (holder ? `pid ${holder.pid}, ${holder.command}` : 'pid not known yet');
