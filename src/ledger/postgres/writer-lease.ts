import { hostname } from 'node:os';
import type pg from 'pg';
import { GENESIS_HASH } from '../integrity.js';

/** How long a writer is presumed alive after its last sign of life, ms. */
export const DEFAULT_LEASE_MS = 30_000;

/**
 * A writer's registration and lease. A writer is one id that appends one tamper-evidence chain:
 * by default the host name (`HOOKLEDGER_WRITER_ID` or the `writerId` option name another), so that
 * the per-event processes of one machine share a chain, as they share one on SQLite, and machines
 * never wait for each other. While a process of the writer lives it renews the lease every third
 * of its length (and every commit extends it); once the lease has run out, whoever opens the
 * ledger next marks the writer's `running` rows `interrupted` (ledger/postgres/recovery.ts): a pid
 * cannot be checked from another host.
 */
export class WriterLease {
  private registered: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private sweep: (() => Promise<unknown>) | null = null;

  constructor(
    private readonly pool: pg.Pool,
    readonly writerId: string,
    readonly leaseMs: number = DEFAULT_LEASE_MS,
    private readonly host: string = hostname(),
  ) {}

  /** The lease end a sign of life now sets. */
  nextExpiry(): number {
    return Date.now() + this.leaseMs;
  }

  /**
   * Work to do at each renewal while this writer lives: the store sweeps other writers' expired
   * leases (ledger/postgres/recovery.ts), so a crashed writer's rows are interrupted even when no
   * process opens the ledger afterwards (three long-lived `serve` processes, one killed).
   */
  onRenewal(sweep: () => Promise<unknown>): void {
    this.sweep = sweep;
  }

  /** Registers the writer (once) and starts renewing its lease. */
  ensure(): Promise<void> {
    this.registered ??= this.renew().then(() => {
      this.timer = setInterval(() => void this.tick(), Math.max(50, Math.floor(this.leaseMs / 3)));
      // Renewal never keeps a process alive on its own.
      this.timer.unref();
    });
    // A failed registration is retried by the next write.
    this.registered.catch(() => {
      this.registered = null;
    });
    return this.registered;
  }

  private async tick(): Promise<void> {
    // A failed renewal or sweep (server restarting) is retried at the next tick.
    await this.renew().catch(() => undefined);
    await this.sweep?.().catch(() => undefined);
  }

  /** Creates the writer's row (with an empty chain) or extends its lease. */
  async renew(): Promise<void> {
    await this.pool.query({
      name: 'hl_writer_renew',
      text: `INSERT INTO writers (id, host, head_seq, head_hash, created_at, lease_until) VALUES ($1, $2, 0, $3, $4, $5)
        ON CONFLICT (id) DO UPDATE SET lease_until = greatest(writers.lease_until, EXCLUDED.lease_until), host = EXCLUDED.host`,
      values: [this.writerId, this.host, GENESIS_HASH, Date.now(), this.nextExpiry()],
    });
  }

  /** Stops renewing (the process is closing the ledger); the lease then runs out on its own. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/**
 * The lease length: the option, else `HOOKLEDGER_LEASE_MS` (whole ms, at least 100; anything else
 * keeps the default), else 30 s. A short lease lets other hosts interrupt a dead writer's rows
 * sooner, at the cost of renewing more often; a writer stalled longer than its lease (a paused VM)
 * has its running rows interrupted, though a decision it commits later still lands.
 */
export function defaultLeaseMs(explicit?: number, env: NodeJS.ProcessEnv = process.env): number {
  if (explicit !== undefined) return explicit;
  const text = env.HOOKLEDGER_LEASE_MS?.trim();
  return text !== undefined && /^\d+$/.test(text) && Number(text) >= 100 ? Number(text) : DEFAULT_LEASE_MS;
}

/** The writer id: the option, else `HOOKLEDGER_WRITER_ID`, else the host name. */
export function defaultWriterId(explicit?: string, env: NodeJS.ProcessEnv = process.env): string {
  return explicit || env.HOOKLEDGER_WRITER_ID || hostname();
}
