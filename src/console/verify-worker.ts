/**
 * Runs verify off the console's event loop: a full verify reads the whole chain (tens of
 * seconds on a million invocations) and, on SQLite, would stall every page. Opens its own
 * connection to the same ledger from the console's open options (`openLedger` chooses the
 * engine); posts `{ report }` or `{ error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { describeThrown } from '../domain/errors.js';
import { openLedger, type OpenOptions } from '../ledger/ledger.js';
import { readAnchor } from '../ledger/verify.js';

const { open, anchorFile } = workerData as { open: OpenOptions; anchorFile: string | null };
try {
  const ledger = await openLedger(open);
  try {
    const anchor = anchorFile ? readAnchor(anchorFile) : undefined;
    parentPort!.postMessage({ report: await ledger.verify(anchor ? { anchor } : {}) });
  } finally {
    await ledger.close();
  }
} catch (error) {
  parentPort!.postMessage({ error: describeThrown(error) });
}
