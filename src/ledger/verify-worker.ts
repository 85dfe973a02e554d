/**
 * The worker thread program of a split verify (verify-threads.ts): walks chunks of the chain on
 * its own read-only connection to the ledger file.
 */
import Database from 'better-sqlite3';
import { workerData } from 'node:worker_threads';
import { chainWalker, walkRange } from './verify.js';
import { workChunks, type VerifyWorkerData } from './verify-threads.js';

const data = workerData as VerifyWorkerData;
workChunks(
  data,
  () => new Database(data.path, { readonly: true, fileMustExist: true }),
  (db) => {
    const walker = chainWalker(db, data);
    return (chunk) => walkRange(walker, chunk[0], chunk[1]);
  },
);
