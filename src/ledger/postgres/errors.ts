import { describeThrown } from '../../domain/errors.js';
import { oneLine as fold } from '../../domain/text.js';

/**
 * One line for a PostgreSQL or connection failure, saying what to check. The server's own
 * message is kept where it is already precise (it never contains the password); socket errors
 * get a plain description.
 */
export function describePgError(error: unknown): string {
  const e = error as { code?: string; message?: string; address?: string; port?: number } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const where = e?.address ? ` at ${e.address}${e.port ? `:${e.port}` : ''}` : '';
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused${where}: is PostgreSQL running and listening there?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found: ${oneLine(e?.message)}`;
    case 'ETIMEDOUT':
      return `connection timed out${where}`;
    case 'ECONNRESET':
    case 'EPIPE':
    case '57P01': // admin_shutdown
    case '57P02': // crash_shutdown
    case '57P03': // cannot_connect_now
      return `the server closed the connection (restarted or shut down): ${oneLine(e?.message)}`;
    case '28P01':
    case '28000':
      return `${oneLine(e?.message)} (check the password in the URL, PGPASSWORD or ~/.pgpass)`;
    case '3D000':
      return `${oneLine(e?.message)} (create it first: createdb)`;
    case '57014':
      return `statement timeout: the server cancelled a statement that ran too long (${oneLine(e?.message)})`;
    case '25006':
      return `the database is read-only for this connection: ${oneLine(e?.message)}`;
    case '42501':
      // Row-level security (a machine's ship role, docs/ship.md) refuses rows of another source with the same code.
      return /row-level security/.test(e?.message ?? '')
        ? `permission denied: ${oneLine(e?.message)} (this role may write only its own source's records: docs/ship.md, Security)`
        : `permission denied: ${oneLine(e?.message)} (a read-only role cannot write the ledger)`;
    case '53300':
      return `too many connections: ${oneLine(e?.message)}`;
  }
  const message = oneLine(e?.message ?? describeThrown(error));
  if (/timeout expired|Connection terminated due to connection timeout/i.test(message)) return `connection timed out: ${message}`;
  if (/Connection terminated/i.test(message)) return `the server closed the connection (restarted or shut down): ${message}`;
  return message;
}

const oneLine = (text: string | undefined): string => fold(text ?? 'unknown error');
