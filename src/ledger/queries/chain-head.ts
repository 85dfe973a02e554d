import type { Ledger } from '../open.js';
import { prepared } from '../statements.js';

/** The newest link of a tamper-evidence chain: what an anchor records, and what `verify` ends at. */
export interface ChainHead {
  /**
   * Whose chain this is: null on an engine with one chain (SQLite); the writer id where every
   * writer appends its own chain (PostgreSQL).
   */
  writer: string | null;
  seq: number;
  hash: string;
  /** What the link covers (`invocation`, `outcome`, …); null when the head link itself is gone (verify says why). */
  kind: string | null;
  /** ms since the epoch the link was written; null when the head link itself is gone. */
  at: number | null;
}

/** SQLite's one chain: its last link, or none when nothing has been chained yet. One index read (the primary key's end). */
export function chainHeads(ledger: Ledger): ChainHead[] {
  const head = prepared<[], Omit<ChainHead, 'writer'>>(ledger, 'SELECT seq, hash, kind, at FROM chain ORDER BY seq DESC LIMIT 1').get();
  return head ? [{ writer: null, ...head }] : [];
}
