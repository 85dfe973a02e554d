const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovering)
  '53300', // too_many_connections
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

/**
 * Whether a failure may pass by itself (the centre is down, restarting or unreachable), so that
 * shipping should wait and retry, rather than one that needs a person (wrong password, missing
 * database, a role without the grants, a diverged ledger).
 */
export function isTransient(error: unknown): boolean {
  for (
    let e = error as { code?: unknown; message?: unknown; cause?: unknown } | undefined, depth = 0;
    e && depth < 5;
    e = e.cause as typeof e, depth++
  ) {
    if (typeof e.code === 'string' && (TRANSIENT_CODES.has(e.code) || e.code.startsWith('08'))) return true;
    if (
      typeof e.message === 'string' &&
      /Connection terminated|timeout expired|connection timed out|Client has encountered a connection error/i.test(e.message)
    )
      return true;
  }
  return false;
}
