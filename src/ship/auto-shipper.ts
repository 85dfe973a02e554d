import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { describeThrown } from '../domain/errors.js';
import { openLedger, type Ledger } from '../ledger/open.js';
import { displayUrl } from '../ledger/postgres/url.js';
import { ShipperLock, shipperHolder } from '../ledger/ship-lock.js';
import {
  autoShipFiles,
  logShipLine,
  shipAgainMarked,
  takeShipAgain,
  writeShipStatus,
  type AutoShipFiles,
  type AutoShipStatus,
} from './auto-files.js';
import { ship } from './ship.js';

/**
 * The shipper side of automatic shipping: `hookledger ship --background`, started detached by
 * a hook after SessionEnd/Stop (auto-trigger.ts). At most one per ledger: it takes the
 * ledger's shipper lock or leaves at once. It waits `debounceMs` (events of one burst then
 * share one shipper), ships, and ships again while "ship again" was marked during a pass.
 * Every start, pass and failure is one line in `<ledger>.ship.log`; the last attempt is in
 * `<ledger>.ship.json` (`ship --status`).
 */

export interface AutoShipperOptions {
  /** The local SQLite ledger. */
  ledgerPath: string;
  /** The centre's URL (from the environment: it may carry the password). */
  url: string;
  /** Wait before the first pass, ms, so that a burst of events is shipped by one pass. */
  debounceMs: number;
  /** While the centre cannot be reached, keep retrying this long per pass, ms. */
  retryForMs: number;
  /** How long to wait for the lock when something holds it for an instant, ms. Default 2000. */
  lockWaitMs?: number;
  /** Stops the shipper at the next batch boundary. */
  signal?: AbortSignal;
}

export type AutoShipperResult = 'shipped' | 'failed' | 'busy';

export async function runAutoShipper(options: AutoShipperOptions): Promise<AutoShipperResult> {
  const ledgerPath = resolve(options.ledgerPath);
  const files = autoShipFiles(ledgerPath);
  const who = `shipper pid ${process.pid}`;
  const lockWaitMs = options.lockWaitMs ?? 2000;
  let lock = ShipperLock.tryAcquire(files.locks, lockWaitMs, 'ship --background');
  if (!lock) {
    const holder = shipperHolder(files.locks);
    logShipLine(
      files,
      `${who}: another shipper${holder ? ` (pid ${holder.pid}, ${holder.command})` : ''} holds ${ledgerPath}; it ships these records`,
    );
    return 'busy';
  }
  const to = displayUrl(options.url);
  const status: AutoShipStatus = {
    pid: process.pid,
    state: 'running',
    to,
    startedAt: new Date().toISOString(),
    endedAt: null,
    passes: 0,
    invocations: 0,
    links: 0,
    shippedUpTo: null,
    localHead: null,
    error: null,
  };
  let ledger: Ledger | null = null;
  try {
    logShipLine(files, `${who}: started, shipping ${ledgerPath} to ${to}`);
    writeShipStatus(files, status);
    // Aborted early by a signal: the loop below notices it.
    await delay(options.debounceMs, undefined, options.signal ? { signal: options.signal } : {}).catch(() => undefined);
    ledger = openLedger({ path: ledgerPath });
    for (;;) {
      do {
        if (options.signal?.aborted) throw new Error('stopped by a signal');
        takeShipAgain(files);
        await shipPass(ledger, options, files, status, who);
      } while (shipAgainMarked(files));
      lock.release();
      lock = null;
      // An event that found the lock still held marked "ship again" before it looked: take it over.
      if (!shipAgainMarked(files)) break;
      lock = retakeForMark(files, lockWaitMs);
      if (!lock) break;
    }
    status.state = 'shipped';
    logShipLine(files, `${who}: done after ${status.passes} pass${status.passes === 1 ? '' : 'es'}`);
    return 'shipped';
  } catch (error) {
    status.state = 'failed';
    status.error = describeThrown(error);
    logShipLine(files, `${who}: failed: ${status.error}`);
    return 'failed';
  } finally {
    status.endedAt = new Date().toISOString();
    try {
      writeShipStatus(files, status);
    } finally {
      ledger?.close();
      lock?.release();
    }
  }
}

/** One `ship` run to the end of the ledger; its counts go into the status and one log line. */
async function shipPass(ledger: Ledger, options: AutoShipperOptions, files: AutoShipFiles, status: AutoShipStatus, who: string) {
  let waiting = false;
  const report = await ship({
    ledger,
    url: options.url,
    retryForMs: options.retryForMs,
    ...(options.signal ? { signal: options.signal } : {}),
    // The first wait of a pass is logged; the give-up (or the success) closes it in one line.
    notice: (line) => {
      if (waiting) return;
      waiting = true;
      logShipLine(files, `${who}: ${line}`);
    },
  });
  status.passes++;
  status.invocations += report.shipped.invocations;
  status.links += report.shipped.links;
  status.shippedUpTo = report.head.seq;
  status.localHead = report.localHead;
  writeShipStatus(files, status);
  logShipLine(
    files,
    `${who}: pass ${status.passes}: shipped ${report.shipped.invocations} invocations (${report.shipped.links} links) to ${report.to} as source ${report.source}; up to link ${report.head.seq} of ${report.localHead}`,
  );
}

/**
 * The lock taken back after letting it go, for a "ship again" mark seen then (step 4 of
 * docs/ship.md, "The shipper"). With a wait, not in one try: a look (an event's, `ship --status`)
 * holds a lock file for an instant, and a shipper that left then would leave the mark to nobody
 * when that look was one that starts no shipper. Null only when another shipper took the lock
 * meanwhile, which clears the mark as it starts.
 */
export function retakeForMark(files: AutoShipFiles, waitMs: number): ShipperLock | null {
  return ShipperLock.tryAcquire(files.locks, waitMs, 'ship --background');
}
