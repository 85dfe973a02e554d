import type Database from 'better-sqlite3';
import type { HookSet } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import type { Outcome } from '../domain/outcomes.js';
import type { InvocationRecorder, InvocationResult } from '../runner/recorder.js';
import { guardWrite } from './sqlite-errors.js';
import type { LedgerWriter } from './write.js';

/**
 * Group commit: the writes of concurrent invocations share one transaction.
 *
 * A SQLite commit costs far more than the statements in it: every index page an invocation
 * touches is written to the WAL again by every commit (about 40 frames per invocation with
 * this schema's indexes), while consecutive invocations touch mostly the same pages (the
 * right-hand leaves of indexes on ids and times). A server deciding many invocations at once
 * (`serve`) therefore queues each write (a `running` row, a final commit) and commits the
 * queue in one IMMEDIATE transaction on the next turn of the event loop (`setImmediate`): all
 * the requests whose bytes arrived in the same poll phase share it, and so do the final
 * commits of the invocations decided since. A write's promise settles only after COMMIT has
 * returned, so every acknowledged decision is as durable as with a commit of its own
 * (docs/design.md §4, "commit before answering").
 *
 * One write that fails (a statement error, an invocation row that is gone) fails only its own
 * invocation: the transaction is rolled back and run again without it. A failure of the
 * transaction itself (the lock not granted within the busy timeout, a full disk) fails every
 * write in it, as it would have failed each alone.
 */

interface QueuedWrite {
  what: string;
  write: () => unknown;
  after: ((value: unknown) => void) | undefined;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Thrown inside the batch transaction to say which write failed. */
class WriteFailed {
  constructor(
    readonly index: number,
    readonly error: unknown,
  ) {}
}

/** Queues writes and commits them together (see the module comment). One per connection's writer. */
export class GroupCommit {
  private queue: QueuedWrite[] = [];
  private scheduled = false;
  /** Transactions committed so far (for tests and benchmarks). */
  commits = 0;
  private readonly commitBatch: (batch: QueuedWrite[]) => unknown[];

  /**
   * @param onCommit called once after each committed batch (checkpoint and rollup bookkeeping).
   * @param beforeCommit called before each batch transaction begins (waits out a background checkpoint).
   */
  constructor(
    sqlite: Database.Database,
    private readonly path: string,
    private readonly onCommit: () => void,
    beforeCommit: () => void = () => {},
  ) {
    const batchTransaction = sqlite.transaction((batch: QueuedWrite[]) => {
      const values: unknown[] = new Array(batch.length);
      for (let i = 0; i < batch.length; i++) {
        try {
          values[i] = batch[i]!.write();
        } catch (error) {
          throw new WriteFailed(i, error);
        }
      }
      return values;
    });
    // IMMEDIATE: the write lock at BEGIN, so a busy ledger waits under busy_timeout (write.ts says why).
    this.commitBatch = (batch) => {
      beforeCommit();
      return batchTransaction.immediate(batch);
    };
  }

  /** Writes in this turn's transaction; settles once it is committed. `after` runs on success, before the promise settles. */
  submit<T>(what: string, write: () => T, after?: (value: T) => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({
        what,
        write,
        after: after as ((value: unknown) => void) | undefined,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Writes queued and not yet committed. */
  get pending(): number {
    return this.queue.length;
  }

  private flush(): void {
    this.scheduled = false;
    let batch = this.queue;
    this.queue = [];
    while (batch.length > 0) {
      let values: unknown[];
      try {
        values = this.commitBatch(batch);
      } catch (caught) {
        if (caught instanceof WriteFailed) {
          // Only that write fails; the others are committed without it.
          const failed = batch[caught.index]!;
          this.fail(failed, caught.error);
          batch = batch.filter((_, i) => i !== caught.index);
          continue;
        }
        for (const queued of batch) this.fail(queued, caught);
        return;
      }
      this.commits += 1;
      this.onCommit();
      for (let i = 0; i < batch.length; i++) {
        const queued = batch[i]!;
        try {
          queued.after?.(values[i]);
          queued.resolve(values[i]);
        } catch (error) {
          queued.reject(error);
        }
      }
      return;
    }
  }

  private fail(queued: QueuedWrite, error: unknown): void {
    try {
      guardWrite(this.path, queued.what, () => {
        throw error;
      });
    } catch (described) {
      queued.reject(described);
    }
  }
}

/**
 * A ledger writer whose `running` rows and final commits are group-committed (see the module
 * comment): what `Ledger.writer({ groupCommit: true })` returns. Hook-set registration and the
 * background outcomes (off the decision path) are written as by the plain writer.
 */
export class GroupCommitWriter implements InvocationRecorder {
  private readonly group: GroupCommit;

  /**
   * @param grouping when given, writes are queued only while it answers true (or others are
   *   queued); otherwise each commits at once, as the plain writer's do.
   */
  constructor(
    private readonly writer: LedgerWriter,
    sqlite: Database.Database,
    path: string,
    private readonly grouping?: () => boolean,
  ) {
    this.group = new GroupCommit(
      sqlite,
      path,
      () => writer.committed(),
      () => writer.beforeWrite(),
    );
  }

  /** Whether this write waits for company: always without `grouping`; with it, while it says so or others wait. */
  private grouped(): boolean {
    return this.grouping === undefined || this.group.pending > 0 || this.grouping();
  }

  /** Transactions the group commit has committed (for tests and benchmarks). */
  get commits(): number {
    return this.group.commits;
  }

  hookSetId(hookSet: HookSet): number {
    return this.writer.hookSetId(hookSet);
  }

  begin(hookSetId: number, invocation: Invocation, startedAt: number): number | Promise<number> {
    if (!this.grouped()) return this.writer.begin(hookSetId, invocation, startedAt);
    return this.beginGrouped(hookSetId, invocation, startedAt);
  }

  private async beginGrouped(hookSetId: number, invocation: Invocation, startedAt: number): Promise<number> {
    const prepared = this.writer.prepareBegin(hookSetId, invocation, startedAt);
    return this.group.submit(
      'record the invocation',
      () => this.writer.writeBegin(prepared),
      (id) => this.writer.opened(id, prepared),
    );
  }

  finish(
    invocationId: number,
    result: InvocationResult,
    outcomes: Outcome[],
    finishedAt: number = Date.now(),
  ): number[] | Promise<number[]> {
    if (!this.grouped()) return this.writer.finish(invocationId, result, outcomes, finishedAt);
    return this.finishGrouped(invocationId, result, outcomes, finishedAt);
  }

  private async finishGrouped(invocationId: number, result: InvocationResult, outcomes: Outcome[], finishedAt: number): Promise<number[]> {
    const prepared = this.writer.prepareFinish(invocationId, result, outcomes, finishedAt);
    return this.group
      .submit(
        'commit the decision',
        () => this.writer.writeFinish(prepared),
        (pendingIds) => this.writer.finished(prepared, pendingIds),
      )
      .catch((error: unknown) => {
        this.writer.forget(invocationId);
        throw error;
      });
  }

  startBackground(outcomeRowId: number, startedAt: number, executionOrder: number): void {
    this.writer.startBackground(outcomeRowId, startedAt, executionOrder);
  }

  completeBackground(outcomeRowId: number, outcome: Outcome): void {
    this.writer.completeBackground(outcomeRowId, outcome);
  }
}
