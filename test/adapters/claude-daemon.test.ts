import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClaudeBundle, buildHookBundle } from '../../scripts/build-bundle.js';
import { listDaemons } from '../../src/cli/daemon/admin.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { runCli, runNode } from '../cli-helpers.js';
import { writeScriptsConfig } from './claude-scripts.js';

/**
 * The claude launcher with its daemon (src/cli/daemon/): real child processes started as Claude
 * Code starts them, a real daemon on a real Unix socket, real SQLite ledgers. Each test has its
 * own socket directory (HOOKLEDGER_DAEMON_DIR), so its daemon is its own.
 */

const FIXTURES = join(import.meta.dirname, '../fixtures/claude-code');
const SCRIPTS = join(import.meta.dirname, '../fixtures/claude-hooks');
const root = join(import.meta.dirname, '../..');

let dir: string;
let launcher: string;
const socketDirs: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookledger-daemon-'));
  launcher = await buildClaudeBundle(join(dir, 'pkg', 'dist', 'bundle', 'claude.cjs'));
  for (const agent of ['codex', 'gemini'] as const) await buildHookBundle(agent, join(dir, 'pkg', 'dist', 'bundle', `${agent}.cjs`));
  for (const name of ['migrations', 'node_modules']) symlinkSync(join(root, name), join(dir, 'pkg', name));
}, 60_000);

afterAll(() => {
  for (const socketDir of socketDirs) for (const pid of daemonPids(socketDir)) kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

/** A fresh private socket directory for one test's daemon. */
function socketDir(): string {
  const path = mkdtempSync(join(dir, 'run-'));
  chmodSync(path, 0o700);
  socketDirs.push(path);
  return path;
}

/** A fresh project directory. */
function project(): string {
  return mkdtempSync(join(dir, 'project-'));
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the launcher as Claude Code does: argv, the event on stdin, the project's environment. */
function runLauncher(options: {
  cwd: string;
  args: string[];
  input: string;
  env: NodeJS.ProcessEnv;
  agent?: 'codex' | 'gemini';
}): Promise<Run> {
  const [entry, name] = options.agent ? [join(dir, 'pkg', 'dist', 'bundle', `${options.agent}.cjs`), options.agent] : [launcher, 'claude'];
  return runNode([entry, name, ...options.args], { cwd: options.cwd, env: options.env, input: options.input });
}

/**
 * The daemon on, in `sockets`. The acknowledgement wait is generous: on a loaded test machine a
 * slow acknowledgement would send an event in process (correct, but not what most tests count);
 * the test of a stuck daemon sets its own.
 */
function daemonEnv(sockets: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return { HOOKLEDGER_DAEMON: 'on', HOOKLEDGER_DAEMON_DIR: sockets, HOOKLEDGER_DAEMON_ACK_MS: '15000', ...extra };
}

/** The pids of daemons whose socket is in `sockets` (their argv names it). */
function daemonPids(sockets: string): number[] {
  const ps = spawnSync('ps', ['-eo', 'pid=,stat=,args='], { encoding: 'utf8' }).stdout;
  return ps
    .split('\n')
    .filter((line) => line.includes('--hookledger-daemon') && line.includes(sockets) && !/^\s*\d+\s+Z/.test(line))
    .map((line) => Number(line.trim().split(/\s+/)[0]));
}

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The status of the one daemon answering in `sockets`, waiting for it to be up. */
async function daemonStatus(sockets: string) {
  let found: Awaited<ReturnType<typeof listDaemons>> = [];
  await waitFor('a daemon to answer', async () => {
    found = (await listDaemons(sockets)).filter((d) => d.status !== null);
    return found.length === 1;
  });
  return found[0]!.status!;
}

/** Waits until the daemon has no event in flight (background hooks done). */
async function daemonQuiet(sockets: string): Promise<void> {
  await waitFor('the daemon to finish its events', async () => (await daemonStatus(sockets)).inFlight === 0);
}

/** claude-command.test.ts's hook set, plus a hook that reports where it ran and what it inherited: the event's directory and environment, not the daemon's. */
function scriptsConfig(at: string): string {
  return writeScriptsConfig(at, [
    {
      id: 'where',
      point: 'pre_tool_use',
      match: 'Edit',
      command: `printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"%s %s"}}' "$PWD" "$EVENT_MARK"`,
    },
  ]);
}

interface Recorded {
  invocations: Record<string, unknown>[];
  outcomes: Record<string, unknown>[];
}

/** What a ledger holds, without ids, times and durations. */
function recorded(db: string): Recorded {
  const ledger = SqliteLedger.open({ path: db, readonly: true });
  try {
    const invocations = ledger.sqlite
      .prepare(
        `SELECT point, event_name, tool_name, tool_use_id, status, decision, decisive_hook_id, reason_code, message,
                modified_input_json, context_json, raw_json FROM invocations ORDER BY id`,
      )
      .all() as Record<string, unknown>[];
    const outcomes = ledger.sqlite
      .prepare(
        `SELECT i.tool_use_id, o.hook_id, o.status, o.decision, o.reason_code, o.failure_detail
           FROM outcomes o JOIN invocations i ON i.id = o.invocation_id ORDER BY i.id, o.hook_id`,
      )
      .all() as Record<string, unknown>[];
    return { invocations, outcomes };
  } finally {
    void ledger.close();
  }
}

function completedCount(db: string): number {
  const ledger = SqliteLedger.open({ path: db, readonly: true });
  try {
    return (ledger.sqlite.prepare(`SELECT count(*) AS n FROM invocations WHERE status = 'completed'`).get() as { n: number }).n;
  } finally {
    void ledger.close();
  }
}

/** The answer with the invocation ids it names made comparable across ledgers. */
function comparable(run: Run): Run {
  const strip = (text: string) => text.replace(/explain \d+/g, 'explain N');
  return { code: run.code, stdout: strip(run.stdout), stderr: strip(run.stderr) };
}

const bash = (command: string, id = `toolu_${Math.random().toString(36).slice(2)}`) =>
  JSON.stringify({
    hook_event_name: 'PreToolUse',
    session_id: 's-daemon',
    cwd: '/nonexistent',
    tool_name: 'Bash',
    tool_use_id: id,
    tool_input: { command },
  });

function denyReason(run: Run): string {
  expect(run.code).toBe(0);
  const answer = JSON.parse(run.stdout) as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } };
  expect(answer.hookSpecificOutput?.permissionDecision).toBe('deny');
  return answer.hookSpecificOutput!.permissionDecisionReason!;
}

/** A .mjs hook set that imports the word it blocks from policy.mjs (to edit an imported module). */
function moduleConfig(at: string, word: string): string {
  writeFileSync(join(at, 'policy.mjs'), `export const word = ${JSON.stringify(word)};\n`);
  const path = join(at, 'hooks.mjs');
  writeFileSync(
    path,
    `import { word } from './policy.mjs';
export default { name: 'module', version: '1', hooks: [
  { id: 'words', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail',
    run: (inv) => String(inv.toolInput?.command ?? '').includes(word) ? { decision: 'deny', reasonCode: 'policy_violation', message: 'no ' + word } : undefined },
] };
`,
  );
  return path;
}

describe('the claude daemon', { timeout: 120_000 }, () => {
  it('has a launcher of Node built-ins only: no zod, no bundle code', () => {
    const text = readFileSync(launcher, 'utf8');
    expect(text.length).toBeLessThan(10_000);
    const required = [...text.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]);
    expect(required.every((name) => name!.startsWith('node:'))).toBe(true);
  });

  it('decides every fixture event as the in-process path does: same answers, exit codes and records', async () => {
    const cwd = project();
    const sockets = socketDir();
    scriptsConfig(cwd);
    const recordFile = join(cwd, 'background.txt');
    const env = { RECORD_FILE: recordFile, EVENT_MARK: 'mark-1' };
    const fixtures = readdirSync(FIXTURES).filter((f) => f.endsWith('.json'));
    const inputs = fixtures.map((f) => {
      // The `where` hook reports the directory it ran in: one that exists here.
      const payload = JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')) as Record<string, unknown>;
      return JSON.stringify({ ...payload, cwd });
    });
    // Allow, ask with a rewrite, and input hookledger cannot read (decided by --on-error's default, deny).
    inputs.push(bash('ls'), bash('npm publish'), '{"hook_event_name": "PreToolUse", not json', '');

    const here: Run[] = [];
    for (const input of inputs) {
      here.push(
        await runLauncher({
          cwd,
          args: ['--config', 'hooks.json', '--db', 'here.db'],
          input,
          env: { ...env, HOOKLEDGER_DAEMON: 'off', HOOKLEDGER_DAEMON_DIR: sockets },
        }),
      );
    }
    expect(readdirSync(sockets)).toEqual([]);
    expect(daemonPids(sockets)).toEqual([]);
    const backgroundHere = readFileSync(recordFile, 'utf8').trim().split('\n').length;
    expect(backgroundHere).toBeGreaterThan(0);

    // The first event starts the daemon; the rest are decided by it.
    // (Started with another EVENT_MARK: the hooks must see each event's environment, not the daemon's.)
    const warmup = await runLauncher({
      cwd,
      args: ['--config', 'hooks.json', '--db', 'warmup.db'],
      input: bash('ls'),
      env: daemonEnv(sockets, { ...env, EVENT_MARK: 'daemon-start' }),
    });
    expect(warmup.code).toBe(0);
    const before = (await daemonStatus(sockets)).events;
    const daemon: Run[] = [];
    for (const input of inputs) {
      daemon.push(await runLauncher({ cwd, args: ['--config', 'hooks.json', '--db', 'daemon.db'], input, env: daemonEnv(sockets, env) }));
    }
    expect((await daemonStatus(sockets)).events - before).toBe(inputs.length);
    await daemonQuiet(sockets);

    expect(daemon.map(comparable)).toEqual(here.map(comparable));
    // The answers cover deny, ask with a rewrite, a crashed hook, a timeout and the hooks' own directory and environment.
    const all = daemon.map((r) => r.stdout).join('\n');
    for (const expected of [
      '"permissionDecision":"deny"',
      '"permissionDecision":"ask"',
      '"updatedInput"',
      'crash',
      'hang',
      `${cwd} mark-1`,
    ]) {
      expect(all).toContain(expected);
    }
    expect(recorded(join(cwd, 'daemon.db'))).toEqual(recorded(join(cwd, 'here.db')));
    // The background hooks ran in the daemon too, after the answers.
    expect(readFileSync(recordFile, 'utf8').trim().split('\n').length).toBe(2 * backgroundHere);
  });

  it('SIGKILL of the daemon between events and mid-event: every event is still decided and recorded, nothing recorded is lost', async () => {
    const cwd = project();
    const sockets = socketDir();
    writeFileSync(
      join(cwd, 'hooks.json'),
      JSON.stringify({
        name: 'slow',
        hooks: [
          { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', command: `bash ${join(SCRIPTS, 'block-rm.sh')}` },
          {
            id: 'slow',
            point: 'pre_tool_use',
            match: 'Bash',
            capability: 'guardrail',
            command: `case "$(cat)" in *sleepy*) sleep 2; echo "slow says no" >&2; exit 2;; esac; exit 0`,
          },
        ],
      }),
    );
    const db = join(cwd, 'l.db');
    const run = (command: string) =>
      runLauncher({ cwd, args: ['--config', 'hooks.json', '--db', db], input: bash(command), env: daemonEnv(sockets) });

    expect(denyReason(await run('rm -rf /'))).toContain('no-rm');
    const first = await daemonStatus(sockets);
    expect(denyReason(await run('rm -rf /tmp/x'))).toContain('no-rm');
    expect((await daemonStatus(sockets)).events).toBe(first.events + 1);
    expect(completedCount(db)).toBe(2);

    // Between events.
    kill(first.pid, 'SIGKILL');
    await waitFor('the daemon to die', () => !daemonPids(sockets).includes(first.pid));
    expect(denyReason(await run('rm -rf ~'))).toContain('no-rm');
    expect(completedCount(db)).toBe(3);

    // Mid-event: the hook of this event sleeps; the daemon is killed while it runs.
    const second = await daemonStatus(sockets);
    expect(second.pid).not.toBe(first.pid);
    const started = Date.now();
    const pending = run('echo sleepy');
    await waitFor('the event to reach the daemon', async () => (await daemonStatus(sockets)).inFlight === 1);
    kill(second.pid, 'SIGKILL');
    const decided = await pending;
    expect(denyReason(decided)).toContain('slow says no');
    // Decided again in process after the daemon died: the slow hook ran to its end there.
    expect(Date.now() - started).toBeGreaterThan(2000);
    // The fallback recorded it; the three before are intact; the killed daemon's row is running or interrupted, never completed.
    expect(completedCount(db)).toBe(4);
    const rows = recorded(db).invocations;
    expect(
      rows
        .filter((r) => String(r.raw_json).includes('sleepy'))
        .map((r) => r.status)
        .sort(),
    ).toEqual(expect.arrayContaining(['completed']));
    expect(rows.filter((r) => r.status === 'completed').length).toBe(4);
  });

  it('uses the new hook set after the config or a module it imports is edited', async () => {
    const cwd = project();
    const sockets = socketDir();
    const config = moduleConfig(cwd, 'alpha');
    const run = (command: string) =>
      runLauncher({ cwd, args: ['--config', config, '--db', 'l.db'], input: bash(command), env: daemonEnv(sockets) });
    expect(denyReason(await run('echo alpha'))).toContain('no alpha');
    await daemonStatus(sockets);
    expect(denyReason(await run('echo alpha'))).toContain('no alpha');

    // The imported module.
    writeFileSync(join(cwd, 'policy.mjs'), `export const word = "bravo-longer";\n`);
    expect(denyReason(await run('echo bravo-longer'))).toContain('no bravo-longer');
    expect(JSON.parse((await run('echo alpha')).stdout)).not.toHaveProperty('hookSpecificOutput.permissionDecision', 'deny');

    // The config itself (a fresh daemon took over; it must see this edit too).
    await daemonStatus(sockets);
    expect(denyReason(await run('echo bravo-longer'))).toContain('no bravo-longer');
    writeFileSync(config, readFileSync(config, 'utf8').replace("'no ' + word", "'never ' + word"));
    expect(denyReason(await run('echo bravo-longer'))).toContain('never bravo-longer');

    // A JSON config.
    const json = join(cwd, 'hooks.json');
    const jsonConfig = (message: string) =>
      writeFileSync(
        json,
        JSON.stringify({
          name: 'j',
          hooks: [{ id: 'j', point: 'pre_tool_use', capability: 'guardrail', command: `echo ${message} >&2; exit 2` }],
        }),
      );
    jsonConfig('first');
    const runJson = () => runLauncher({ cwd, args: ['--config', json, '--db', 'l.db'], input: bash('ls'), env: daemonEnv(sockets) });
    expect(denyReason(await runJson())).toContain('first');
    await daemonStatus(sockets);
    expect(denyReason(await runJson())).toContain('first');
    jsonConfig('second-message');
    expect(denyReason(await runJson())).toContain('second-message');
  });

  it('decides concurrent events, and many events at once on a cold start leave one daemon', async () => {
    const cwd = project();
    const sockets = socketDir();
    scriptsConfig(cwd);
    const db = join(cwd, 'l.db');
    const env = daemonEnv(sockets);
    const burst = () =>
      Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          runLauncher({ cwd, args: ['--config', 'hooks.json', '--db', db], input: bash(`rm -rf /n${i}`), env }),
        ),
      );
    // Cold: no daemon yet; each decides in process and may start one.
    for (const run of await burst()) expect(denyReason(run)).toContain('block-rm');
    await waitFor('one daemon to remain', () => daemonPids(sockets).length === 1, 30_000);
    // A daemon started late by a slow event finds this one answering and exits; none stays beside it.
    await sleep(2500);
    await waitFor('one daemon to remain', () => daemonPids(sockets).length === 1, 30_000);
    const status = await daemonStatus(sockets);
    expect(status.pid).toBe(daemonPids(sockets)[0]);

    // Warm: all eight at once through the one daemon.
    for (const run of await burst()) expect(denyReason(run)).toContain('block-rm');
    expect((await daemonStatus(sockets)).events).toBe(status.events + 8);
    expect(completedCount(db)).toBe(16);
  });

  it('a daemon stuck in a hook does not hold other events: they are decided in process once, and a fresh daemon takes over', async () => {
    const cwd = project();
    const sockets = socketDir();
    // An in-process hook that blocks the daemon's event loop for 6 s on "spin".
    writeFileSync(
      join(cwd, 'hooks.mjs'),
      `export default { name: 'spin', hooks: [
  { id: 'spin', point: 'pre_tool_use', capability: 'guardrail',
    run: (inv) => { const c = String(inv.toolInput?.command ?? '');
      if (c.includes('spin')) { const end = Date.now() + 6000; while (Date.now() < end) {} }
      return c.includes('rm -rf') ? { decision: 'deny', reasonCode: 'policy_violation', message: 'no rm' } : undefined; } },
] };
`,
    );
    const db = join(cwd, 'l.db');
    const run = (command: string, id: string) =>
      runLauncher({
        cwd,
        args: ['--config', 'hooks.mjs', '--db', db],
        input: bash(command, id),
        env: daemonEnv(sockets, { HOOKLEDGER_DAEMON_ACK_MS: '1000' }),
      });
    await run('ls', 'toolu_first');
    const stuck = await daemonStatus(sockets);
    const spinning = run('spin', 'toolu_spin');
    await waitFor('the daemon to take the spinning event', async () => (await listDaemons(sockets)).every((d) => d.status === null));
    const started = Date.now();
    const other = await run('rm -rf /', 'toolu_other');
    expect(denyReason(other)).toContain('no rm');
    expect(Date.now() - started).toBeLessThan(6000);
    expect((await spinning).code).toBe(0);
    // One daemon remains: the one the other event started, if it found the stuck one still silent
    // (which then saw it was replaced and left), else the stuck one, now free again.
    await waitFor('one daemon', () => daemonPids(sockets).length === 1);
    expect((await daemonStatus(sockets)).pid).toBe(daemonPids(sockets)[0]);
    expect(stuck.pid).toBeGreaterThan(0);
    expect(denyReason(await run('rm -rf ~', 'toolu_after'))).toContain('no rm');
    // Every event recorded once: the late request was refused by the stuck daemon, not decided twice.
    const ids = recorded(db).invocations.map((r) => r.tool_use_id);
    expect(ids.sort()).toEqual(['toolu_after', 'toolu_first', 'toolu_other', 'toolu_spin']);
  });

  it('decides in process, starting no daemon, when the socket directory is not private', async () => {
    const cwd = project();
    const sockets = socketDir();
    scriptsConfig(cwd);
    chmodSync(sockets, 0o755);
    const run = await runLauncher({
      cwd,
      args: ['--config', 'hooks.json', '--db', 'l.db'],
      input: bash('rm -rf /'),
      env: daemonEnv(sockets),
    });
    expect(denyReason(run)).toContain('block-rm');
    await sleep(1000);
    expect(readdirSync(sockets)).toEqual([]);
    expect(daemonPids(sockets)).toEqual([]);

    // A symlink to a private directory is refused too.
    const real = socketDir();
    const link = join(dir, `link-${Date.now()}`);
    symlinkSync(real, link);
    socketDirs.push(link);
    expect(
      denyReason(
        await runLauncher({ cwd, args: ['--config', 'hooks.json', '--db', 'l.db'], input: bash('rm -rf /'), env: daemonEnv(link) }),
      ),
    ).toContain('block-rm');
    await sleep(1000);
    expect(readdirSync(real)).toEqual([]);
    expect(completedCount(join(cwd, 'l.db'))).toBe(2);
  });

  it('exits after the idle time, and `hookledger daemon status|stop` see and stop it', async () => {
    const cwd = project();
    scriptsConfig(cwd);
    const idle = socketDir();
    await runLauncher({
      cwd,
      args: ['--config', 'hooks.json', '--db', 'l.db'],
      input: bash('ls'),
      env: daemonEnv(idle, { HOOKLEDGER_DAEMON_IDLE_MS: '1500' }),
    });
    const { pid } = await daemonStatus(idle);
    await waitFor('the idle daemon to exit', () => !daemonPids(idle).includes(pid));
    expect(readdirSync(idle).filter((f) => f.endsWith('.sock'))).toEqual([]);

    const sockets = socketDir();
    await runLauncher({ cwd, args: ['--config', 'hooks.json', '--db', 'l.db'], input: bash('ls'), env: daemonEnv(sockets) });
    await daemonStatus(sockets);
    await runLauncher({ cwd, args: ['--config', 'hooks.json', '--db', 'l.db'], input: bash('ls'), env: daemonEnv(sockets) });
    const status = await daemonStatus(sockets);
    expect(status.events).toBe(1);
    const cliEnv = { HOOKLEDGER_DAEMON_DIR: sockets };
    const shown = await runCli(['daemon', 'status'], { env: cliEnv });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`pid ${status.pid}`);
    expect(shown.stdout).toContain(join(cwd, 'l.db'));
    const json = JSON.parse((await runCli(['daemon', 'status', '--json'], { env: cliEnv })).stdout) as {
      daemons: { status: { pid: number } }[];
    };
    expect(json.daemons.map((d) => d.status.pid)).toEqual([status.pid]);
    const stopped = await runCli(['daemon', 'stop'], { env: cliEnv });
    expect(stopped.stdout).toContain('stopped 1 daemon(s)');
    await waitFor('the stopped daemon to exit', () => !daemonPids(sockets).includes(status.pid));
    expect((await runCli(['daemon', 'status'], { env: cliEnv })).stdout).toContain('no hookledger daemon');
    expect((await runCli(['daemon', 'restart'], { env: cliEnv })).stderr).toContain('expected "status" or "stop"');
  });

  it('is on by default: with HOOKLEDGER_DAEMON unset the second event is decided by the daemon the first started', async () => {
    const cwd = project();
    const sockets = socketDir();
    scriptsConfig(cwd);
    const env = { HOOKLEDGER_DAEMON: undefined, HOOKLEDGER_DAEMON_DIR: sockets };
    expect(
      denyReason(await runLauncher({ cwd, args: ['--config', 'hooks.json', '--db', 'l.db'], input: bash('rm -rf /'), env })),
    ).toContain('block-rm');
    const before = (await daemonStatus(sockets)).events;
    expect(
      denyReason(await runLauncher({ cwd, args: ['--config', 'hooks.json', '--db', 'l.db'], input: bash('rm -rf /'), env })),
    ).toContain('block-rm');
    expect((await daemonStatus(sockets)).events).toBe(before + 1);
    expect(completedCount(join(cwd, 'l.db'))).toBe(2);
  });

  it('codex and gemini go through their own daemon and decide as in process', async () => {
    const cwd = project();
    const wire = join(root, 'test/fixtures/agents/wire-hooks.mjs');
    const common = { session_id: 's-agents', cwd: '/work/app', transcript_path: null };
    const events = {
      codex: [
        {
          ...common,
          turn_id: 't',
          model: 'm',
          permission_mode: 'default',
          hook_event_name: 'PreToolUse',
          tool_name: 'shell',
          tool_input: { command: 'rm -rf /' },
          tool_use_id: 'c1',
        },
        {
          ...common,
          turn_id: 't',
          model: 'm',
          permission_mode: 'default',
          hook_event_name: 'PreToolUse',
          tool_name: 'shell',
          tool_input: { command: 'ls' },
          tool_use_id: 'c2',
        },
        'not json',
      ],
      gemini: [
        {
          ...common,
          timestamp: '2026-11-23T19:00:00Z',
          hook_event_name: 'BeforeTool',
          tool_name: 'run_shell_command',
          tool_input: { command: 'rm -rf /' },
        },
        {
          ...common,
          timestamp: '2026-11-23T19:00:00Z',
          hook_event_name: 'BeforeTool',
          tool_name: 'run_shell_command',
          tool_input: { command: 'ls' },
        },
        'not json',
      ],
    };
    for (const agent of ['codex', 'gemini'] as const) {
      const sockets = socketDir();
      const inputs = events[agent].map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
      const run = (input: string, db: string, env: NodeJS.ProcessEnv) =>
        runLauncher({ agent, cwd, args: ['--config', wire, '--db', db], input, env });
      const here: Run[] = [];
      for (const input of inputs)
        here.push(await run(input, `${agent}-here.db`, { HOOKLEDGER_DAEMON: 'off', HOOKLEDGER_DAEMON_DIR: sockets }));
      await run(inputs[1]!, `${agent}-warmup.db`, daemonEnv(sockets));
      const before = (await daemonStatus(sockets)).events;
      const daemon: Run[] = [];
      for (const input of inputs) daemon.push(await run(input, `${agent}-daemon.db`, daemonEnv(sockets)));
      expect((await daemonStatus(sockets)).events - before).toBe(inputs.length);
      await daemonQuiet(sockets);
      expect(daemon.map(comparable)).toEqual(here.map(comparable));
      expect(daemon[0]!.stdout).toContain('deny');
      expect(recorded(join(cwd, `${agent}-daemon.db`))).toEqual(recorded(join(cwd, `${agent}-here.db`)));
      expect(readdirSync(sockets).filter((f) => f.endsWith('.sock'))[0]).toMatch(new RegExp(`^${agent}-`));
    }
  });

  it('HOOKLEDGER_DAEMON=off never starts one', async () => {
    const cwd = project();
    const sockets = socketDir();
    scriptsConfig(cwd);
    mkdirSync(join(cwd, 'sub'));
    const run = await runLauncher({
      cwd: join(cwd, 'sub'),
      args: ['--config', '../hooks.json', '--db', '../l.db'],
      input: bash('rm -rf /'),
      env: { HOOKLEDGER_DAEMON: 'off', HOOKLEDGER_DAEMON_DIR: sockets },
    });
    expect(denyReason(run)).toContain('block-rm');
    await sleep(800);
    expect(daemonPids(sockets)).toEqual([]);
    expect(completedCount(join(cwd, 'l.db'))).toBe(1);
  });
});
