import type { LedgerWriterOptions } from '../write.js';
import { connectPostgres, type OpenPostgresOptions, type PostgresConnection } from './open.js';
import { recoverPostgres } from './recovery.js';
import { describePgError } from './errors.js';
import { LedgerError } from '../../domain/errors.js';
import { PostgresRecorder } from './write.js';
import { defaultWriterId, WriterLease } from './writer-lease.js';

export interface PostgresStoreOptions extends OpenPostgresOptions {
  /** This process's writer id (see writer-lease.ts); default `HOOKLEDGER_WRITER_ID`, else the host name. */
  writerId?: string;
  /** How long this writer's lease lasts without renewal, ms. Default 30000. */
  leaseMs?: number;
}

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
            throw new LedgerError('ledger_open_failed', `cannot recover ledger ${connection.displayUrl}: ${describePgError(error)}`, {
              cause: error,
            });
          });
      const lease = new WriterLease(connection.pool, defaultWriterId(options.writerId), options.leaseMs);
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
