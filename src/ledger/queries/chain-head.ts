import type { Ledger } from '../open.js';
import { prepared } from '../statements.js';

/** The newest link of the tamper-evidence chain: what an anchor records, and what `verify` ends at. */
export interface ChainHead {
  seq: number;
  hash: string;
  kind: string;
  /** ms since the epoch the link was written. */
  at: number;
}

/** The chain's last link, or null when nothing has been chained yet. One index read (the primary key's end). */
export function chainHead(ledger: Ledger): ChainHead | null {
  return prepared<[], ChainHead>(ledger, 'SELECT seq, hash, kind, at FROM chain ORDER BY seq DESC LIMIT 1').get() ?? null;
}
