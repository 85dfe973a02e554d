import { Worker } from 'node:worker_threads';
import { describeThrown } from '../domain/errors.js';
import type { OpenOptions } from '../ledger/ledger.js';
import type { VerifyReport } from '../ledger/verify.js';
import type { IntegrityState } from './page.js';

type Finished = { report: VerifyReport; finishedAt: number } | { error: string; finishedAt: number };

/** The worker module next to this one: .js when built, .ts under tsx (tests, development). */
const workerUrl = new URL(`./verify-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/** One verify at a time in a worker thread; the integrity page shows the last result and starts a new one when asked. */
export function createIntegrityState(open: OpenOptions, anchorFile: string | null, log: (line: string) => void): IntegrityState {
  let last: Finished | null = null;
  let running: number | null = null;
  return {
    anchorFile,
    last: () => last,
    runningSince: () => running,
    start() {
      // A `:memory:` ledger cannot be opened a second time.
      if (running !== null || ('path' in open && open.path === ':memory:')) return;
      running = Date.now();
      let worker: Worker;
      try {
        worker = new Worker(workerUrl, { workerData: { open, anchorFile } });
      } catch (error) {
        last = { error: describeThrown(error), finishedAt: Date.now() };
        running = null;
        return;
      }
      worker.unref();
      const finish = (result: Finished) => {
        if (running === null) return;
        last = result;
        running = null;
      };
      worker.once('message', (m: { report?: VerifyReport; error?: string }) =>
        finish(m.report ? { report: m.report, finishedAt: Date.now() } : { error: m.error ?? 'verify failed', finishedAt: Date.now() }),
      );
      worker.once('error', (error) => {
        log(`hookledger console: verify: ${describeThrown(error)}`);
        finish({ error: describeThrown(error), finishedAt: Date.now() });
      });
      worker.once('exit', (code) => finish({ error: `verify stopped (exit ${code})`, finishedAt: Date.now() }));
    },
  };
}
