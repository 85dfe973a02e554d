/** PostgreSQL URLs, without loading the driver (the CLI checks `--db` before choosing an engine). */

/** Whether a `--db` value names a PostgreSQL ledger rather than a SQLite file. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(value);
}

/** The URL without its password (and without a `password` parameter), for messages. */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '';
    parsed.searchParams.delete('password');
    return parsed.toString().replace(/^(postgres(?:ql)?:\/\/[^@/]*):@/i, '$1@');
  } catch {
    return 'postgres://(unparseable URL)';
  }
}

/**
 * The one line refusing a centre URL given in `flag` with its password in it, or null when it has
 * none: a command line shows in `ps` and /proc/PID/cmdline for as long as the process runs (Node
 * cannot rewrite argv there). `writtenTo` names a file it would also be written to; `agent`, whose
 * environment the password then belongs in.
 */
export function passwordInFlag(flag: string, url: string, where: { writtenTo?: string; agent?: string } = {}): string | null {
  if (!urlHasPassword(url)) return null;
  const exposure = where.writtenTo ? `be written to ${where.writtenTo} and show in the process list` : 'show in the process list';
  const env = where.agent ? ` in ${where.agent}'s environment` : '';
  return `${flag}: the URL must not carry the password (it would ${exposure}): give it with PGPASSWORD or ~/.pgpass${env}, or put the whole URL in HOOKLEDGER_SHIP_TO${where.agent ? ' there' : ''} (${displayUrl(url)})`;
}

/** Whether a URL carries a password (in its user info or a `password` parameter). */
export function urlHasPassword(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.password !== '' || parsed.searchParams.has('password');
  } catch {
    return false;
  }
}
