import { createRequire } from 'node:module';
import { userInfo } from 'node:os';

type PgPass = (connInfo: { host: string; port: string; database: string; user: string }, done: (password?: string) => void) => void;

/**
 * The connection URL with the password from `~/.pgpass` (or `PGPASSFILE`) filled in, when
 * neither the URL nor `PGPASSWORD` gives one. node-postgres still reads the file itself, but
 * prints a deprecation warning on stderr when it does (a stray line in every command's output
 * and in the agent's hook log); reading it here, with the module the driver uses, keeps libpq's
 * lookup rules without that line. The result holds the password: only the driver sees it,
 * messages show `displayUrl` of the URL the user gave.
 */
export async function withPgpassPassword(url: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // createPool reports the bad URL
  }
  if (parsed.password || parsed.searchParams.has('password') || env.PGPASSWORD) return url;
  const user = decodeURIComponent(parsed.username) || env.PGUSER || userInfo().username;
  const connInfo = {
    host: decodeURIComponent(parsed.hostname) || env.PGHOST || 'localhost',
    port: parsed.port || env.PGPORT || '5432',
    database: decodeURIComponent(parsed.pathname.slice(1)) || env.PGDATABASE || user,
    user,
  };
  const password = await new Promise<string | undefined>((resolve) => {
    try {
      // pgpass is node-postgres's own dependency: resolved from the driver, as the driver does.
      const pgpass = createRequire(createRequire(import.meta.url).resolve('pg'))('pgpass') as PgPass;
      pgpass(connInfo, resolve);
    } catch {
      resolve(undefined);
    }
  });
  if (password === undefined) return url;
  parsed.password = encodeURIComponent(password);
  return parsed.toString();
}
