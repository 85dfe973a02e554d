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

/** Whether a URL carries a password (in its user info or a `password` parameter). */
export function urlHasPassword(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.password !== '' || parsed.searchParams.has('password');
  } catch {
    return false;
  }
}
