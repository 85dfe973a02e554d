import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRootDir } from '../../scripts/build-bundle.js';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from './support.js';

const hooks = `import { defineHooks, deny } from '${join(import.meta.dirname, '../../src/index.js')}';
export default defineHooks({ name: 'pg-cli', version: '1', hooks: [
  { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail',
    run: (inv) => String((inv.toolInput as { command?: string }).command).includes('rm -rf') ? deny('rm -rf is not allowed', 'safety_violation') : undefined },
  { id: 'watch', point: 'pre_tool_use', run: () => undefined },
] });
`;

const claudeFixture = join(import.meta.dirname, '../fixtures/claude-code/01-pretooluse-bash-rm.json');

/** The same URL with the password replaced (or added). */
function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  parsed.password = password;
  return parsed.toString();
}

describe('the CLI on a PostgreSQL ledger (--db postgres://… and HOOKLEDGER_DB)', { timeout: 120_000 }, () => {
  it('run and claude record; explain answers as on SQLite; verify passes and shows the writer chain', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.ts'), hooks);
    const { url } = await freshDatabase();
    const password = new URL(url).password;
    const pgUrl = url;
    const pgqlUrl = url.replace(/^postgres:/, 'postgresql:');
    const invocation = {
      point: 'pre_tool_use',
      sessionId: 's-1',
      toolName: 'Bash',
      toolUseId: 'toolu_42',
      toolInput: { command: 'rm -rf /' },
    };

    const env = { HOOKLEDGER_WRITER_ID: 'cli-writer' };
    const run = await runCli(['run', '--config', join(dir, 'hooks.ts'), '--db', pgUrl, '--json'], {
      input: JSON.stringify(invocation),
      env,
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'no-rm', reasonCode: 'safety_violation' });

    // The same invocation on SQLite: explain --json is the same apart from ids, times and durations.
    const sqlite = join(dir, 'l.db');
    const onSqlite = await runCli(['run', '--config', join(dir, 'hooks.ts'), '--db', sqlite, '--json'], {
      input: JSON.stringify(invocation),
    });
    expect(onSqlite.code).toBe(0);
    const explainPg = await runCli(['explain', 'toolu_42', '--json'], { env: { ...env, HOOKLEDGER_DB: pgqlUrl } });
    expect(explainPg.stderr).toBe('');
    expect(explainPg.code).toBe(0);
    const explainSqlite = await runCli(['explain', 'toolu_42', '--json', '--db', sqlite]);
    expect(normalise(JSON.parse(explainPg.stdout))).toEqual(normalise(JSON.parse(explainSqlite.stdout)));
    expect(JSON.parse(explainPg.stdout).outcomes).toEqual(report.outcomes);
    expect(JSON.parse(explainPg.stdout).origin).toMatchObject({ kind: 'direct' });

    // claude through the CLI and through the built single-file bundle (it loads dist/ledger/postgres/engine.js).
    const claude = await runCli(['claude', '--config', join(dir, 'hooks.ts'), '--db', pgUrl], {
      input: readFileSync(claudeFixture, 'utf8'),
      env,
    });
    expect(claude.stderr).toBe('');
    expect(JSON.parse(claude.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    const bundled = await runBundle(['--config', join(dir, 'hooks.ts'), '--db', pgUrl], readFileSync(claudeFixture), env);
    expect(bundled.stderr).toBe('');
    expect(JSON.parse(bundled.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(/denied by no-rm .*hookledger explain 3/);

    const verify = await runCli(['verify', '--json', '--db', pgUrl]);
    expect(verify.code).toBe(0);
    const verified = JSON.parse(verify.stdout);
    expect(verified).toMatchObject({ ok: true, links: 3, records: { invocations: 3 }, writers: [{ writer: 'cli-writer', links: 3 }] });
    expect(verified.location).not.toContain(password);
    const text = await runCli(['verify', '--db', pgUrl]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('ledger intact');
    expect(text.stdout).toMatch(/^writer cli-writer: links 3, head 3 [0-9a-f]{64}$/m);
    for (const out of [run, explainPg, claude, bundled, verify, text]) expect(out.stdout + out.stderr).not.toContain(password);
  });

  it('verify names the writer of the first bad record', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.ts'), hooks);
    const { url, name } = await freshDatabase();
    const input = JSON.stringify({ point: 'pre_tool_use', sessionId: 's', toolName: 'Bash', toolInput: { command: 'rm -rf /' } });
    for (const writer of ['alpha', 'beta'])
      expect(
        (await runCli(['run', '--config', join(dir, 'hooks.ts'), '--db', url], { input, env: { HOOKLEDGER_WRITER_ID: writer } })).code,
      ).toBe(0);
    await adminSql(`UPDATE invocations SET tool_name = 'Edited' WHERE writer_id = 'beta'`, name);
    const result = await runCli(['verify', '--db', url]);
    expect(result.code).toBe(5);
    expect(result.stdout).toMatch(/^writer alpha: links 1/m);
    expect(result.stdout).toMatch(/changed\s+invocations\s+2\s+beta\s+1\s+writer beta: invocation #2/);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/integrity check failed for postgres:\/\/.*: changed invocations #2: writer beta: invocation #2/);
    const json = JSON.parse((await runCli(['verify', '--json', '--db', url])).stdout);
    expect(json.problems[0]).toMatchObject({ kind: 'changed', table: 'invocations', id: 2, writer: 'beta' });
  });

  it('a command PostgreSQL cannot do yet, a wrong password, an unreachable server: one line, exit 3, no password', async () => {
    const { url } = await freshDatabase();
    const password = new URL(url).password;
    // What the engine cannot do (an anchor is one chain head; PostgreSQL has one chain per writer).
    const anchor = join(tempDir(), 'anchor.json');
    const unsupported = await runCli(['verify', '--anchor', anchor, '--db', url]);
    expect(unsupported.code).toBe(3);
    expect(unsupported.stderr).toMatch(/^hookledger: verify --anchor is not supported on postgres ledgers \(one chain per writer\)\n$/);

    const wrong = await runCli(['explain', '1', '--db', withPassword(url, 'wrong-secret-pw')]);
    expect(wrong.code).toBe(3);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(/password authentication failed/);
    expect(wrong.stderr + wrong.stdout).not.toContain('wrong-secret-pw');

    // The password from PGPASSWORD: it works, and is never shown either.
    const bare = withPassword(url, '');
    const viaEnv = await runCli(['verify', '--db', bare], { env: { PGPASSWORD: password } });
    expect(viaEnv.code).toBe(0);
    expect(viaEnv.stdout).toContain(bare.replace(/^postgres:\/\/postgres:@/, 'postgres://postgres@'));
    const wrongEnv = await runCli(['verify'], { env: { PGPASSWORD: 'wrong-env-pw', HOOKLEDGER_DB: bare } });
    expect(wrongEnv.code).toBe(3);
    expect(wrongEnv.stderr + wrongEnv.stdout).not.toContain('wrong-env-pw');
    expect(wrongEnv.stderr.trim().split('\n')).toHaveLength(1);

    // From ~/.pgpass (HOME points at a directory holding one, mode 0600 as libpq requires).
    const home = tempDir();
    const parsed = new URL(url);
    writeFileSync(join(home, '.pgpass'), `${parsed.hostname}:${parsed.port}:*:postgres:${password}\n`, { mode: 0o600 });
    const viaPgpass = await runCli(['verify', '--db', bare], { env: { HOME: home } });
    expect(viaPgpass.code).toBe(0);
    // No driver deprecation warning (or anything else) on stderr.
    expect(viaPgpass.stderr).toBe('');
    expect(viaPgpass.stdout).not.toContain(password);
    // A password given as a URL parameter is not shown either.
    const asParameter = await runCli(['verify', '--db', `${bare}?password=wrong-param-pw`]);
    expect(asParameter.code).toBe(3);
    expect(asParameter.stderr.trim().split('\n')).toHaveLength(1);
    expect(asParameter.stderr + asParameter.stdout).not.toContain('wrong-param-pw');

    const port = Number(parsed.port);
    const refused = await runCli(['denials', '--db', `postgresql://postgres:refused-pw@127.0.0.1:${port === 1 ? 2 : 1}/x`]);
    expect(refused.code).toBe(3);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/connection refused/);
    expect(refused.stderr).not.toContain('refused-pw');
    for (const out of [unsupported, wrong, viaEnv]) expect(out.stdout + out.stderr).not.toContain(password);
  });
});

/** What differs between two engines for the same decision: ids, times, durations and where the ledger is. */
function normalise({ origin: _origin, ...explanation }: Record<string, unknown>): unknown {
  // `origin` (who wrote a central record) is PostgreSQL's own; checked on its own.
  return JSON.parse(
    JSON.stringify(explanation, (key, value: unknown) =>
      /^(id|invocationId|startedAt|finishedAt|durationUs|durationMs|pid|host|at)$/.test(key) ? 0 : value,
    ),
  );
}

/** The built claude bundle (dist/bundle/claude.cjs; npm test builds first). */
function runBundle(
  args: string[],
  input: Buffer,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [join(packageRootDir, 'dist', 'bundle', 'claude.cjs'), ...args], {
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(input);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
