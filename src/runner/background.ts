import { setMaxListeners } from 'node:events';
import type { Invocation } from '../domain/invocation.js';
import type { Outcome } from '../domain/outcomes.js';
import { replacementOf } from '../domain/results.js';
import { executeHook } from './execute-hook.js';
import { applyExecution } from './outcome.js';
import type { Registration } from './select.js';

/** One background hook waiting to run: its pending outcome row and the input it will see. */
export interface BackgroundJob {
  registration: Registration;
  invocation: Invocation;
  invocationId: number | null;
  outcome: Outcome;
  executionOrder: number;
  replay: boolean;
  /** Called when the hook starts (to record the start). */
  onStart: (startedAt: number) => void;
  /** Called once with the completed (or skipped) outcome. */
  onDone: (outcome: Outcome) => void;
}

/**
 * Runs background hooks after the foreground pass, never awaited by the caller, at most
 * `concurrency` at once; the rest wait in a FIFO queue rather than being dropped, so every
 * started invocation's background hooks do run unless the runner is closed first.
 */
export class BackgroundDispatcher {
  private readonly queue: BackgroundJob[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();
  private closed = false;

  constructor(private readonly concurrency: number) {
    // Every running hook listens to the shutdown signal; more than Node's default of 10 is expected here.
    setMaxListeners(concurrency + 10, this.shutdown.signal);
  }

  /** Number of jobs queued or running. */
  get size(): number {
    return this.queue.length + this.running.size;
  }

  enqueue(job: BackgroundJob): void {
    if (this.closed) {
      job.onDone({ ...job.outcome, status: 'skipped', skipReason: 'shutdown' });
      return;
    }
    this.queue.push(job);
    this.pump();
  }

  /**
   * Stops accepting work and waits for queued and running hooks until `deadlineMs`; then
   * aborts the running ones (recorded as timed out) and records the queued ones as skipped.
   */
  async drain(deadlineMs: number): Promise<void> {
    this.closed = true;
    const deadline = Date.now() + deadlineMs;
    while (this.size > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.race(this.running),
        new Promise((resolve) => (timer = setTimeout(resolve, Math.max(0, deadline - Date.now())))),
      ]);
      clearTimeout(timer);
    }
    for (const job of this.queue.splice(0)) job.onDone({ ...job.outcome, status: 'skipped', skipReason: 'shutdown' });
    if (this.running.size > 0) {
      this.shutdown.abort(new Error('runner closed'));
      await Promise.allSettled(this.running);
    }
  }

  private pump(): void {
    while (this.running.size < this.concurrency && this.queue.length > 0) {
      const job = this.queue.shift()!;
      // Started on a later turn of the event loop, never inside the caller's run(): a
      // synchronous hook (or the synchronous start of an async one) would otherwise hold
      // back the decision it must not delay.
      const task = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => this.run(job))
        .finally(() => {
          this.running.delete(task);
          this.pump();
        });
      this.running.add(task);
    }
  }

  private async run(job: BackgroundJob): Promise<void> {
    job.onStart(Date.now());
    const execution = await executeHook(job.registration.hook, job.invocation, {
      replay: job.replay,
      invocationId: job.invocationId,
      signal: this.shutdown.signal,
    });
    const outcome = applyExecution(job.outcome, execution, job.executionOrder);
    if (
      execution.ok &&
      ((execution.result.decision !== 'none' && execution.result.decision !== 'allow') || replacementOf(execution.result) !== undefined)
    ) {
      outcome.failureReason = 'observe_only_violation';
      outcome.failureDetail = `a background hook returned ${execution.result.decision}${execution.result.decision === 'allow' ? ' with a replacement input' : ''}; background hooks never decide`;
    }
    job.onDone(outcome);
  }
}
