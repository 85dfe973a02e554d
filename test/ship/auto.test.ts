import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/postgres-server.js';
import { shipperRunning } from '../../src/ledger/ship-lock.js';
import { autoShipFiles, logShipLine, readShipStatus, shipAgainMarked } from '../../src/ship/auto-files.js';
import { runCli, startCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { centreCounts, centreWithoutPassword, countLocal, waitFor } from './auto-support.js';
import { verifyCentre } from './support.js';

/**
 * Automatic shipping (install-claude --ship): real Claude Code command lines as install-claude
 * writes them (node on the built bundle), run through a shell the way Claude Code runs them; the
 * detached shipper is the built CLI; the centre is the test run's real PostgreSQL.
 */

/** A hook set whose Stop guardrail blocks (so a changed decision would show) and nothing else. */
const HOOKS = {
  name: 'auto-ship',
  version: '1',
  hooks: [
    {
      id: 'keep-going',
      point: 'stop',
      capability: 'guardrail',
      timeoutMs: 5000,
      command: { command: 'sh', args: ['-c', 'echo "tests still fail" >&2; exit 2'] },
    },
  ],
};

interface Setup {
  dir: string;
  db: string;
  settings: string;
  /** The centre's URL without its password, the password, and the database name. */
  url: string;
  password: string;
  database: string;
  env: NodeJS.ProcessEnv;
}

async function setUp(options: { url?: string; password?: string; database?: string } = {}): Promise<Setup> {
  const dir = tempDir();
  const db = join(dir, 'laptop.db');
  const settings = join(dir, 'settings.json');
  writeFileSync(join(dir, 'hooks.json'), JSON.stringify(HOOKS));
  let { url, password, database } = options;
  if (url === undefined) ({ url, password, database } = await centreWithoutPassword('auto'));
  const env = {
    ...process.env,
    HOME: dir, // no ~/.pgpass of the machine's
    PGPASSWORD: password!,
    HOOKLEDGER_SHIP_DEBOUNCE_MS: '300',
    HOOKLEDGER_SHIP_TO: '',
    HOOKLEDGER_DB: '',
  };
  return { dir, db, settings, url, password: password!, database: database ?? '', env };
}

async function install(s: Setup, extra: string[] = []) {
  const result = await runCli(
    ['install-claude', '--settings', s.settings, '--config', join(s.dir, 'hooks.json'), '--db', s.db, '--ship', s.url, ...extra],
    { env: s.env, cwd: s.dir },
  );
  expect(result.code, result.stderr).toBe(0);
  const written = JSON.parse(readFileSync(s.settings, 'utf8')) as {
    hooks: Record<string, { hooks: { command: string }[] }[]>;
  };
  return (event: string) => written.hooks[event]![0]!.hooks[0]!.command;
}

/** Runs a settings command as Claude Code does: through a shell, the event JSON on stdin. */
function runHook(command: string, payload: object, env: NodeJS.ProcessEnv, cwd: string) {
  const started = Date.now();
  const child = spawn('sh', ['-c', command], { env: { ...env, CLAUDE_PROJECT_DIR: cwd }, cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(JSON.stringify(payload));
  // 'exit', not 'close': the detached shipper holds no pipe of ours, but wait for the process only.
  return new Promise<{ code: number | null; stdout: string; stderr: string; ms: number }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started })),
  );
}

const stop = (session: string) => ({ hook_event_name: 'Stop', session_id: session, stop_hook_active: false, cwd: '/tmp' });
const preToolUse = (session: string, n: number) => ({
  hook_event_name: 'PreToolUse',
  session_id: session,
  tool_name: 'Bash',
  tool_use_id: `toolu_${session}_${n}`,
  tool_input: { command: `echo ${n}` },
  cwd: '/tmp',
});

/** Waits until no shipper holds the ledger's lock and the last one wrote its result. */
async function shipperGone(db: string) {
  const files = autoShipFiles(db);
  await waitFor(
    'the shipper to finish',
    () => ({ running: shipperRunning(files.locks), state: readShipStatus(files)?.state }),
    (s) => !s.running && s.state !== undefined && s.state !== 'running',
  );
}

/** Command lines of the running shippers for this ledger (from /proc: what `ps` shows). */
function shipperCommandLines(db: string): string[] {
  return shipperProcesses(db).map((p) => p.cmdline);
}

/** The running shippers for this ledger: pid, command line, nice value. */
function shipperProcesses(db: string): { pid: number; cmdline: string; nice: number }[] {
  const found: { pid: number; cmdline: string; nice: number }[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (!cmdline.includes('--background') || !cmdline.includes(db)) continue;
      // /proc/PID/stat: after "(comm)", the fields from the 3rd on; nice is the 19th.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const nice = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
      found.push({ pid: Number(pid), cmdline: cmdline.replaceAll('\0', ' '), nice });
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

function logLines(db: string): string[] {
  const log = autoShipFiles(db).log;
  return existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n').filter(Boolean) : [];
}

describe('automatic shipping after Stop/SessionEnd (install-claude --ship)', { timeout: 240_000 }, () => {
  it('install-claude --ship writes the target without a password; a password is refused in one line', async () => {
    const s = await setUp();
    const withPassword = s.url.replace('postgres://postgres@', `postgres://postgres:${s.password}@`);
    const refused = await runCli(
      ['install-claude', '--settings', s.settings, '--config', join(s.dir, 'hooks.json'), '--ship', withPassword],
      { env: s.env },
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(refused.stderr).toMatch(/^hookledger: --ship: the URL must not carry the password .*PGPASSWORD or ~\/\.pgpass/);
    expect(refused.stderr).not.toContain(s.password);
    expect(existsSync(s.settings)).toBe(false);

    const commandFor = await install(s);
    for (const event of ['PreToolUse', 'Stop', 'SessionEnd']) {
      expect(commandFor(event)).toMatch(
        /dist\/bundle\/claude\.cjs claude --config .* --ship-to postgres:\/\/postgres@127\.0\.0\.1:\d+\/auto_/,
      );
    }
    expect(readFileSync(s.settings, 'utf8')).not.toContain(s.password);
    // Installing again with the same flags changes nothing.
    const before = readFileSync(s.settings, 'utf8');
    await install(s);
    expect(readFileSync(s.settings, 'utf8')).toBe(before);

    // A password written into the command by hand: the hook answers as ever, ships nothing, says why in one line.
    const handWritten = commandFor('Stop').replace(/--ship-to \S+/, `--ship-to ${withPassword}`);
    const answered = await runHook(handWritten, stop('s1'), s.env, s.dir);
    expect(answered.code).toBe(0);
    expect(JSON.parse(answered.stdout)).toMatchObject({ decision: 'block' });
    expect(answered.stderr).toMatch(/^hookledger: ship: --ship-to: the URL must not carry the password .*; not shipping\n$/);
    expect(answered.stderr).not.toContain(s.password);
    expect(existsSync(autoShipFiles(s.db).log)).toBe(false);
  });

  it("HOOKLEDGER_SHIP_TO in the hook's environment is enough (no --ship-to); a password there stays out of the shipper's command line", async () => {
    const s = await setUp();
    const installed = await runCli(['install-claude', '--settings', s.settings, '--config', join(s.dir, 'hooks.json'), '--db', s.db], {
      env: s.env,
      cwd: s.dir,
    });
    expect(installed.code, installed.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(s.settings, 'utf8')) as { hooks: Record<string, { hooks: { command: string }[] }[]> };
    const command = settings.hooks.Stop![0]!.hooks[0]!.command;
    expect(command).not.toContain('--ship-to');
    const fullUrl = s.url.replace('postgres://postgres@', `postgres://postgres:${s.password}@`);
    const env = { ...s.env, PGPASSWORD: '', HOOKLEDGER_SHIP_TO: fullUrl, HOOKLEDGER_SHIP_DEBOUNCE_MS: '2000' };
    const answered = await runHook(command, stop('s1'), env, s.dir);
    expect(answered.code, answered.stderr).toBe(0);
    const cmdlines = await waitFor(
      'the shipper process',
      () => shipperCommandLines(s.db),
      (l) => l.length > 0,
      30_000,
    );
    expect(cmdlines[0]).not.toContain(s.password);
    await waitFor(
      'the records at the centre',
      () => centreCounts(s.database),
      (c) => c.n === 1,
    );
    await shipperGone(s.db);
    expect(await centreCounts(s.database)).toEqual({ n: 1, distinct: 1 });
    for (const file of Object.values(autoShipFiles(s.db))
      .flat()
      .filter((f) => existsSync(f)))
      expect(readFileSync(file, 'utf8'), file).not.toContain(s.password);
  });

  it('a Stop event through the installed command ships the records in a detached shipper; the password shows nowhere', async () => {
    const s = await setUp();
    const commandFor = await install(s);
    for (let n = 0; n < 3; n++) {
      const r = await runHook(commandFor('PreToolUse'), preToolUse('s1', n), s.env, s.dir);
      expect(r.code, r.stderr).toBe(0);
    }
    // Before Stop, nothing ships.
    expect(existsSync(autoShipFiles(s.db).log)).toBe(false);
    // A longer debounce: the hook must have exited while its shipper has not shipped yet.
    const env = { ...s.env, HOOKLEDGER_SHIP_DEBOUNCE_MS: '3000' };
    const answered = await runHook(commandFor('Stop'), stop('s1'), env, s.dir);
    expect(answered.code, answered.stderr).toBe(0);
    expect(JSON.parse(answered.stdout)).toMatchObject({ decision: 'block' });
    expect(answered.stderr).toBe('');
    expect((await centreCounts(s.database)).n).toBe(0);

    // The shipper runs detached, without the URL (let alone a password) on its command line.
    const cmdlines = await waitFor(
      'the shipper process',
      () => shipperCommandLines(s.db),
      (l) => l.length > 0,
      30_000,
    );
    expect(cmdlines).toHaveLength(1);
    expect(cmdlines[0]).toContain(`bin/hookledger.js ship --background --db ${s.db}`);
    expect(cmdlines[0]).not.toContain(s.password);
    expect(cmdlines[0]).not.toContain('postgres://');
    // Background work at a lower priority than the agent's hooks.
    expect(shipperProcesses(s.db).map((p) => p.nice)).toEqual([10]);

    const local = countLocal(s.db);
    expect(local).toBe(4); // three tool calls and the Stop
    await waitFor(
      'the records at the centre',
      () => centreCounts(s.database),
      (c) => c.n === local,
    );
    await shipperGone(s.db);
    expect(await centreCounts(s.database)).toEqual({ n: local, distinct: local });
    expect((await verifyCentre(s.url.replace('postgres://postgres@', `postgres://postgres:${s.password}@`))).problems).toEqual([]);

    const log = logLines(s.db);
    expect(log[0]).toMatch(/shipper pid \d+: started, shipping .*laptop\.db to postgres:\/\/postgres@127\.0\.0\.1:\d+\/auto_/);
    expect(log.some((l) => /pass 1: shipped 4 invocations \(\d+ links\)/.test(l))).toBe(true);
    expect(log.at(-1)).toMatch(/done after 1 pass$/);
    const status = readShipStatus(autoShipFiles(s.db))!;
    expect(status).toMatchObject({ state: 'shipped', invocations: 4, passes: 1, error: null });

    // `ship --status` tells the same, from the built CLI.
    const shown = await runCli(['ship', '--status', '--db', s.db], { env: s.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('shipper  not running');
    expect(shown.stdout).toMatch(
      /last {5}\S+ shipped 4 invocations \(\d+ links\) to postgres:\/\/postgres@127\.0\.0\.1:\d+\/auto_\w+ in 1 pass/,
    );
    expect(shown.stdout).toContain(`log      ${s.db}.ship.log`);

    for (const file of [s.settings, s.db, `${s.db}-wal`, ...Object.values(autoShipFiles(s.db)).flat()].filter((f) => existsSync(f)))
      expect(readFileSync(file).includes(Buffer.from(s.password)), file).toBe(false);
  });

  it('two Stop events at the same instant start one shipper; a third during its run only marks "ship again"; nothing is duplicated', async () => {
    const s = await setUp();
    const commandFor = await install(s);
    // The third Stop must come while the first shipper still waits out its debounce: 3 tool hooks and a Stop
    // took 12 s at load 16-18 (6 busy loops beside the test run), when a 4 s debounce let a second shipper start.
    const env = { ...s.env, HOOKLEDGER_SHIP_DEBOUNCE_MS: '20000' };
    const [a, b] = await Promise.all([
      runHook(commandFor('Stop'), stop('s1'), env, s.dir),
      runHook(commandFor('Stop'), stop('s2'), env, s.dir),
    ]);
    expect([a.code, b.code]).toEqual([0, 0]);
    // While the shipper waits out its debounce: more records, and another Stop.
    await waitFor('a shipper', () => shipperRunning(autoShipFiles(s.db).locks), Boolean, 30_000);
    for (let n = 0; n < 3; n++) await runHook(commandFor('PreToolUse'), preToolUse('s3', n), s.env, s.dir);
    const c = await runHook(commandFor('Stop'), stop('s3'), env, s.dir);
    expect(c.code).toBe(0);
    await waitFor(
      'the records at the centre',
      () => centreCounts(s.database),
      (n) => n.n === 6,
    );
    await shipperGone(s.db);
    expect(await centreCounts(s.database)).toEqual({ n: 6, distinct: 6 });

    const log = logLines(s.db);
    expect(
      log.filter((l) => / started, shipping /.test(l)),
      log.join('\n'),
    ).toHaveLength(1);
    // A shipper started by the simultaneous event (if the two looked before either took the lock) left at once.
    expect(log.filter((l) => /another shipper holds/.test(l)).length).toBeLessThanOrEqual(1);
    // A shipper that found the lock taken logs and exits; under load its exit can trail its last log line.
    await waitFor(
      'every shipper process to exit',
      () => shipperCommandLines(s.db),
      (l) => l.length === 0,
      30_000,
    );
  });

  it('a manual `ship --follow` holds the ledger: a Stop only marks "ship again", a manual `ship` is refused naming it, and its end hands the mark to a background shipper; nothing is duplicated', async () => {
    const s = await setUp();
    const commandFor = await install(s);
    for (let n = 0; n < 2; n++) await runHook(commandFor('PreToolUse'), preToolUse('s1', n), s.env, s.dir);
    const fullUrl = s.url.replace('postgres://postgres@', `postgres://postgres:${s.password}@`);
    const shipEnv = { ...s.env, HOOKLEDGER_SHIP_TO: fullUrl };
    const follow = startCli(['ship', '--follow', '--db', s.db], { env: shipEnv });
    try {
      await waitFor(
        'the follower',
        () => centreCounts(s.database),
        (c) => c.n === 2,
      );
      const stopped = await runHook(commandFor('Stop'), stop('s1'), s.env, s.dir);
      expect(stopped.code).toBe(0);
      // The follower ships the Stop; the event started no shipper of its own.
      await waitFor(
        'the follower to ship the Stop',
        () => centreCounts(s.database),
        (c) => c.n === 3,
      );
      expect(shipAgainMarked(autoShipFiles(s.db))).toBe(true);
      expect(logLines(s.db).filter((l) => / started, shipping /.test(l))).toEqual([]);
      const status = JSON.parse((await runCli(['ship', '--status', '--db', s.db, '--json'], { env: s.env })).stdout);
      expect(status).toMatchObject({ running: true, holder: { pid: follow.child.pid, command: 'ship --follow' } });
      // A manual ship beside it: one line naming the follower, exit 3, nothing shipped.
      const manual = await runCli(['ship', '--db', s.db, '--json'], { env: shipEnv });
      expect(manual.code).toBe(3);
      expect(manual.stdout).toBe('');
      expect(manual.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(manual.stderr).toMatch(
        new RegExp(`^hookledger: another shipper \\(pid ${follow.child.pid}, ship --follow\\) holds .*laptop\\.db and keeps shipping it`),
      );
      expect(manual.stderr).not.toContain(s.password);
    } finally {
      follow.child.kill('SIGINT');
      await follow.exited;
    }
    expect(follow.output.stderr).toBe('');
    // The follower let go with "ship again" set: a background shipper took it over and found nothing left.
    await waitFor(
      'the background shipper',
      () => readShipStatus(autoShipFiles(s.db))?.state,
      (state) => state === 'shipped',
    );
    await shipperGone(s.db);
    const local = countLocal(s.db);
    expect(local).toBe(3);
    expect(await centreCounts(s.database)).toEqual({ n: local, distinct: local });
    expect(readShipStatus(autoShipFiles(s.db))).toMatchObject({ state: 'shipped', passes: 1, invocations: 0 });
    expect(logLines(s.db).filter((l) => / started, shipping /.test(l))).toHaveLength(1);
    expect(shipAgainMarked(autoShipFiles(s.db))).toBe(false);
    expect((await verifyCentre(fullUrl)).problems).toEqual([]);
  });

  it('a shipper killed with SIGKILL leaves no lock behind: the next Stop starts a new one, which ships everything once', async () => {
    const s = await setUp();
    const commandFor = await install(s);
    // A long debounce holds the first shipper before it ships anything; then it is killed.
    await runHook(commandFor('Stop'), stop('s1'), { ...s.env, HOOKLEDGER_SHIP_DEBOUNCE_MS: '60000' }, s.dir);
    const files = autoShipFiles(s.db);
    await waitFor('a shipper', () => readShipStatus(files)?.state === 'running' && shipperRunning(files.locks), Boolean, 30_000);
    process.kill(readShipStatus(files)!.pid, 'SIGKILL');
    await waitFor(
      'the lock to be free',
      () => shipperRunning(files.locks),
      (running) => !running,
      30_000,
    );
    const shown = await runCli(['ship', '--status', '--db', s.db], { env: s.env });
    expect(shown.stdout).toMatch(/ended without finishing \(killed\?\)/);

    // SessionEnd starts a shipper as Stop does.
    await runHook(commandFor('SessionEnd'), { hook_event_name: 'SessionEnd', session_id: 's1', reason: 'exit' }, s.env, s.dir);
    await waitFor(
      'the records at the centre',
      () => centreCounts(s.database),
      (n) => n.n === 2,
    );
    await shipperGone(s.db);
    expect(await centreCounts(s.database)).toEqual({ n: 2, distinct: 2 });
    expect(logLines(s.db).filter((l) => / started, shipping /.test(l))).toHaveLength(2);
  });

  it('the centre down or a wrong password: the decision is the same, the hook does not wait, and the log says why', async () => {
    const port = await freePort();
    const down = await setUp({ url: `postgres://shipper@127.0.0.1:${port}/centre`, password: 'pw-down-must-not-show', database: 'centre' });
    const commandFor = await install(down);
    const withShip = await runHook(commandFor('Stop'), stop('s1'), down.env, down.dir);
    const without = await runHook(commandFor('Stop').replace(/ --ship-to \S+/, ''), stop('s1'), down.env, down.dir);
    expect(withShip.code).toBe(without.code);
    // The same answer but for the invocation id it names.
    const answer = (stdout: string) => stdout.replace(/explain \d+/, 'explain N');
    expect(answer(withShip.stdout)).toBe(answer(without.stdout));
    expect(JSON.parse(withShip.stdout)).toMatchObject({ decision: 'block' });
    const files = autoShipFiles(down.db);
    const line = await waitFor(
      'the log line',
      () => logLines(down.db),
      (l) => l.some((x) => /cannot reach/.test(x)),
      60_000,
    );
    expect(line.find((x) => /cannot reach/.test(x))).toMatch(
      new RegExp(
        `shipper pid \\d+: cannot reach postgres://shipper@127\\.0\\.0\\.1:${port}/centre \\(connection refused .*\\); retrying in`,
      ),
    );
    // Still retrying: the hook long gone. Stop it (SIGTERM: it records why it ended).
    const pid = readShipStatus(files)!.pid;
    process.kill(pid, 'SIGTERM');
    await shipperGone(down.db);
    expect(readShipStatus(files)).toMatchObject({ state: 'failed' });
    for (const file of Object.values(files).filter((f) => existsSync(f)))
      expect(readFileSync(file, 'utf8'), file).not.toContain('pw-down-must-not-show');

    // A wrong password fails at once (waiting cannot fix it), in one line naming the centre without the password.
    const real = await setUp();
    const wrong = { ...real, env: { ...real.env, PGPASSWORD: 'wrong-password-9c1e' } };
    const wrongCommand = await install(wrong);
    const answered = await runHook(wrongCommand('Stop'), stop('s1'), wrong.env, wrong.dir);
    expect(answer(answered.stdout)).toBe(answer(without.stdout));
    await shipperGone(wrong.db);
    const failed = logLines(wrong.db).filter((l) => /failed:/.test(l));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatch(
      /shipper pid \d+: failed: cannot (ship to|open ledger) postgres:\/\/postgres@127\.0\.0\.1:\d+\/auto_\w+: password authentication failed/,
    );
    expect(logLines(wrong.db).join('\n')).not.toContain('wrong-password-9c1e');
    const shown = await runCli(['ship', '--status', '--db', wrong.db, '--json'], { env: wrong.env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ running: false, last: { state: 'failed' }, log: `${wrong.db}.ship.log` });
    expect(await centreCounts(wrong.database)).toEqual({ n: 0, distinct: 0 });
  });
});

describe('the ship log', () => {
  it('keeps each entry on one line, without anything a terminal would act on', () => {
    const files = autoShipFiles(join(tempDir(), 'l.db'));
    logShipLine(files, 'failed: server says \x1b[2J\x1b]0;owned\x07 and\r\nmore\u009b1m');
    const text = readFileSync(files.log, 'utf8');
    expect(text.split('\n')).toHaveLength(2);
    expect(text).toMatch(/^\S+Z failed: server says {2}\[2J ]0;owned {2}and more 1m\n$/);
    // eslint-disable-next-line no-control-regex
    expect(text.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});
