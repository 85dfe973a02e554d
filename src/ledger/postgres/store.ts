import type { LedgerWriterOptions } from '../write.js';
import { connectPostgres, type OpenPostgresOptions, type PostgresConnection } from './open.js';
import { recoverPostgres } from './recovery.js';
import { describePgError } from './errors.js';
import { LedgerError } from '../../domain/errors.js';
import { PostgresRecorder } from './write.js';
import { defaultLeaseMs, defaultWriterId, WriterLease } from './writer-lease.js';

export interface PostgresStoreOptions extends OpenPostgresOptions {
  /** This process's writer id (see writer-lease.ts); default `HOOKLEDGER_WRITER_ID`, else the host name. */
  writerId?: string;
  /** How long this writer's lease lasts without renewal, ms. Default `HOOKLEDGER_LEASE_MS`, else 30000. */
  leaseMs?: number;
}

/** insufficient_privilege, read_only_sql_transaction: the role (or the server, a standby) cannot write. */
const READ_ONLY_CODES = new Set(['42501', '25006']);

/**
 * An open PostgreSQL ledger: connection, schema brought up to date, recovery of work that no
 * process will finish, and this process's writer lease. The `Ledger` engine
 * (ledger/postgres/engine.ts) is built on it.
 */
export class PostgresStore {
  private constructor(
    readonly connection: PostgresConnection,
    readonly lease: WriterLease,
    readonly recovered: { invocations: number; outcomes: number },
  ) {}

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const connection = await connectPostgres(options);
    try {
      const recovered = options.readonly
        ? { invocations: 0, outcomes: 0 }
        : await recoverPostgres(connection.pool).catch((error: unknown) => {
            // A read-only role may read the ledger but cannot recover it: whoever writes next will.
            if (READ_ONLY_CODES.has((error as { code?: unknown } | null)?.code as string)) return { invocations: 0, outcomes: 0 };
            throw new LedgerError('ledger_open_failed', `cannot recover ledger ${connection.displayUrl}: ${describePgError(error)}`, {
              cause: error,
            });
          });
      const lease = new WriterLease(connection.pool, defaultWriterId(options.writerId), defaultLeaseMs(options.leaseMs));
      // Only the lease decides here: a pid is checked once, at open, not on every renewal.
      lease.onRenewal(() => recoverPostgres(connection.pool, Date.now(), undefined, { localPids: false }));
      return new PostgresStore(connection, lease, recovered);
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
  }

  /** A recorder for one runner. */
  writer(options?: LedgerWriterOptions): PostgresRecorder {
    return new PostgresRecorder(this.connection.pool, this.lease, this.connection.displayUrl, options);
  }

  async close(): Promise<void> {
    this.lease.stop();
    await this.connection.close();
  }
}
