import type { Ledger } from '../ledger/ledger.js';
import type { VerifyReport } from '../ledger/verify.js';
import type { SafeHtml } from './html.js';
import type { Section } from './layout.js';

/** What a page handler gets: the ledger (read through the engine-neutral `Ledger` interface only) and the request's query. */
export interface PageContext {
  ledger: Ledger;
  query: URLSearchParams;
  /** Request time, ms since the epoch (relative filters like `7d` count back from it). */
  now: number;
  /** Verification state kept by the server (the integrity page). */
  integrity: IntegrityState;
}

/** A rendered page body; the server wraps it in the layout. */
export interface PageResult {
  title: string;
  section: Section | null;
  body: SafeHtml;
  status?: number;
}

/** The integrity page's view of verification, which runs in a worker (a full verify reads the whole chain). */
export interface IntegrityState {
  /** The last finished verify, with when it finished. */
  last(): { report: VerifyReport; finishedAt: number } | { error: string; finishedAt: number } | null;
  /** Whether a verify is running now, since when. */
  runningSince(): number | null;
  /** Starts a verify unless one is running. */
  start(): void;
  /** The anchor file given to the console, if any. */
  anchorFile: string | null;
}
