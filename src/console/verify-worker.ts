/**
 * Runs `verifyLedger` off the console's event loop: a full verify reads the whole chain
 * (tens of seconds on a million invocations) and would stall every page. Opens its own
 * read-only connection; posts `{ report }` or `{ error }`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { describeThrown } from '../domain/errors.js';
import { openLedger } from '../ledger/open.js';
import { readAnchor, verifyLedger } from '../ledger/verify.js';

const { path, anchorFile } = workerData as { path: string; anchorFile: string | null };
try {
  const ledger = openLedger({ path, readonly: true });
  try {
    const anchor = anchorFile ? readAnchor(anchorFile) : undefined;
    parentPort!.postMessage({ report: verifyLedger(ledger, anchor ? { anchor } : {}) });
  } finally {
    ledger.close();
  }
} catch (error) {
  parentPort!.postMessage({ error: describeThrown(error) });
}
