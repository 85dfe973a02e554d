import type { Ledger as SqliteHandle } from '../ledger/open.js';
import { addBatch, emptyBatch, readBatch, type LocalBatch } from '../ledger/ship-source.js';

/**
 * Reads the next batch while the centre writes the current one, so that ship's two costs (reading
 * SQLite and building rows here, index upkeep and commit there) overlap instead of adding up.
 *
 * The read goes in slices of a few hundred links, each its own SQLite snapshot, with a turn of
 * the event loop between them, so the PostgreSQL connection keeps its data flowing meanwhile.
 * Slices joined are a valid batch: links commit in seq order, so each slice holds whole records,
 * and reading a record early is what reading it in an earlier snapshot would give (links are
 * immutable; a background completion or a prune after the read is what a later batch carries or
 * verify judges, as for any snapshot). Exactly once does not rest on it: the batch transaction
 * checks that the centre's head is still where the read began, else reads again (`take`).
 */
export class BatchPrefetch {
  private pending: { after: number; batch: Promise<LocalBatch> } | null = null;

  constructor(
    private readonly ledger: SqliteHandle,
    private readonly limit: number,
    private readonly sourceId: string,
    // A slice blocks the event loop while SQLite reads it (~2 ms at 64 links, ~7 ms at 250), and the
    // centre's replies wait for it: 64 kept the centre busier (in-process A/B, 40k invocations, three
    // rounds: 16,177 → 18,402 inv/s median).
    private readonly sliceLinks = 64,
  ) {}

  /** Starts reading the batch after `afterSeq` in the background (replacing any earlier one). */
  start(afterSeq: number): void {
    const batch = this.readInSlices(afterSeq);
    // A failed read surfaces where it is taken (or is read again there); never as an unhandled rejection.
    batch.catch(() => undefined);
    this.pending = { after: afterSeq, batch };
  }

  /** The batch after `afterSeq`: the one read in the background when it began there and found links, else read now. */
  async take(afterSeq: number): Promise<LocalBatch> {
    const pending = this.pending;
    this.pending = null;
    if (pending && pending.after === afterSeq) {
      // A failed background read is simply done again here, where its error (if it recurs) belongs to the batch.
      const batch = await pending.batch.catch(() => null);
      // An empty read is stale as soon as anything commits: read again.
      if (batch && batch.links > 0) return batch;
    }
    return readBatch(this.ledger, afterSeq, this.limit, this.sourceId);
  }

  private async readInSlices(afterSeq: number): Promise<LocalBatch> {
    const whole = emptyBatch();
    let after = afterSeq;
    while (whole.links < this.limit) {
      await new Promise((resolve) => setImmediate(resolve));
      const slice = readBatch(this.ledger, after, Math.min(this.sliceLinks, this.limit - whole.links), this.sourceId);
      if (!slice.span) break;
      addBatch(whole, slice);
      after = slice.span.lastSeq;
    }
    return whole;
  }
}
