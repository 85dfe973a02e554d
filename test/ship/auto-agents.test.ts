import { spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { ShipperLock, shipperRunning } from '../../src/ledger/ship-lock.js';
import { autoShipFiles, readShipStatus, shipAgainMarked } from '../../src/ship/auto-files.js';
import { runCli, startCli } from '../cli-helpers.js';
import { sleep, tempDir } from '../helpers.js';
import { centreCounts, centreWithoutPassword, countLocal, waitFor } from './auto-support.js';
import { verifyCentre } from './support.js';

/**
 * Automatic shipping from the Codex, Gemini CLI and meerkat command hooks (install-<agent>
 * --ship): the command lines each installer writes (node on the built bundle), run the way the
 * agent runs them; the shipper is the built CLI; the centre is the test run's PostgreSQL.
 */

const HOOKS = {
  name: 'auto-ship-agents',
  version: '1',
  hooks: [{ id: 'watch', point: 'pre_tool_use', timeoutMs: 5000, command: { command: 'true', args: [] } }],
};

async function setUp() {
  const dir = tempDir();
  writeFileSync(join(dir, 'hooks.json'), JSON.stringify(HOOKS));
  const { url, password, database } = await centreWithoutPassword('agents');
  const env = {
    ...process.env,
    HOME: dir,
    PGPASSWORD: password,
    HOOKLEDGER_SHIP_DEBOUNCE_MS: '300',
    HOOKLEDGER_SHIP_TO: '',
    HOOKLEDGER_DB: '',
    GEMINI_PROJECT_DIR: dir,
  };
  return { dir, db: join(dir, 'ledger.db'), url, password, database, env };
}
type Setup = Awaited<ReturnType<typeof setUp>>;

/** Runs one hook command: through a shell (Codex, Gemini CLI) or as command + args (meerkat), the payload on stdin. */
function runHook(command: { shell: string } | { file: string; args: string[] }, payload: object, s: Setup) {
  const child =
    'shell' in command
      ? spawn('sh', ['-c', command.shell], { env: s.env, cwd: s.dir, stdio: ['pipe', 'pipe', 'pipe'] })
      : spawn(command.file, command.args, { env: s.env, cwd: s.dir, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(JSON.stringify(payload));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
}

/** install-codex / install-gemini --ship into a JSON file; each event's command line as the agent runs it (through a shell). */
async function installJson(s: Setup, installer: string, name: string) {
  const file = join(s.dir, name);
  const r = await runCli([installer, '--file', file, '--config', join(s.dir, 'hooks.json'), '--db', s.db, '--ship', s.url], {
    env: s.env,
    cwd: s.dir,
  });
  expect(r.code, r.stderr).toBe(0);
  const text = readFileSync(file, 'utf8');
  const hooks = (JSON.parse(text) as { hooks: Record<string, { hooks: { command: string }[] }[]> }).hooks;
  return { command: (event: string) => ({ shell: hooks[event]![0]!.hooks[0]!.command }), text };
}

/** Each agent: how to install with --ship, the command its installer wrote, a tool event, its end event. */
interface Agent {
  name: string;
  install: (s: Setup) => Promise<{ command: (event: string) => { shell: string } | { file: string; args: string[] }; text: string }>;
  tool: (session: string, n: number) => object;
  end: { event: string; payload: (session: string) => object };
}

const agents: Agent[] = [
  {
    name: 'codex',
    install: (s) => installJson(s, 'install-codex', 'codex-hooks.json'),
    tool: (session, n) => ({
      hook_event_name: 'PreToolUse',
      session_id: session,
      turn_id: 't1',
      cwd: '/tmp',
      tool_name: 'Bash',
      tool_input: { command: `echo ${n}` },
      tool_use_id: `call_${session}_${n}`,
    }),
    end: {
      event: 'Stop',
      payload: (session) => ({ hook_event_name: 'Stop', session_id: session, turn_id: 't1', cwd: '/tmp', stop_hook_active: false }),
    },
  },
  {
    name: 'gemini',
    install: (s) => installJson(s, 'install-gemini', 'gemini-settings.json'),
    tool: (session, n) => ({
      hook_event_name: 'BeforeTool',
      session_id: session,
      cwd: '/tmp',
      timestamp: new Date().toISOString(),
      tool_name: 'run_shell_command',
      tool_input: { command: `echo ${n}` },
    }),
    end: {
      event: 'AfterAgent',
      payload: (session) => ({
        hook_event_name: 'AfterAgent',
        session_id: session,
        cwd: '/tmp',
        timestamp: new Date().toISOString(),
        prompt: 'go',
        prompt_response: 'done',
        stop_hook_active: false,
      }),
    },
  },
  {
    name: 'meerkat',
    async install(s) {
      const file = join(s.dir, 'rkat.toml');
      const r = await runCli(['install-meerkat', '--file', file, '--config', join(s.dir, 'hooks.json'), '--db', s.db, '--ship', s.url], {
        env: s.env,
        cwd: s.dir,
      });
      expect(r.code, r.stderr).toBe(0);
      const text = readFileSync(file, 'utf8');
      const entries = (parseToml(text) as { hooks: { entries: { point: string; runtime: { command: string; args: string[] } }[] } }).hooks
        .entries;
      return {
        command: (point) => {
          const entry = entries.find((e) => e.point === point)!;
          return { file: entry.runtime.command, args: entry.runtime.args };
        },
        text,
      };
    },
    tool: (session, n) => ({
      point: 'pre_tool_execution',
      session_id: session,
      turn_number: 1,
      tool_name: 'shell',
      tool_input: { command: `echo ${n}` },
      tool_call_id: `call_${n}`,
    }),
    end: { event: 'run_completed', payload: (session) => ({ point: 'run_completed', session_id: session }) },
  },
];

describe('automatic shipping from the Codex, Gemini CLI and meerkat hooks', { timeout: 240_000 }, () => {
  for (const agent of agents) {
    it(`${agent.name}: install-${agent.name} --ship writes the target without the password; the end event ships every record once in a detached shipper`, async () => {
      const s = await setUp();
      const { command, text } = await agent.install(s);
      expect(text).toContain(`--ship-to`);
      expect(text).toContain(s.url);
      expect(text).not.toContain(s.password);
      const toolEvent = agent.name === 'codex' ? 'PreToolUse' : agent.name === 'gemini' ? 'BeforeTool' : 'pre_tool_execution';
      for (let n = 0; n < 4; n++) {
        const r = await runHook(command(toolEvent), agent.tool('s-1', n), s);
        expect(r.code, r.stderr).toBe(0);
      }
      // Tool events never start a shipper nor mark "ship again".
      expect(shipAgainMarked(autoShipFiles(s.db))).toBe(false);
      expect(existsSync(autoShipFiles(s.db).log)).toBe(false);

      const ended = await runHook(command(agent.end.event), agent.end.payload('s-1'), s);
      expect(ended.code, ended.stderr).toBe(0);
      expect(ended.stderr).toBe('');
      const local = countLocal(s.db);
      expect(local).toBe(5);
      expect(
        await waitFor(
          'the records to ship',
          () => centreCounts(s.database),
          (c) => c.n >= local,
        ),
      ).toEqual({ n: local, distinct: local });
      await waitFor(
        'the shipper to finish',
        () => readShipStatus(autoShipFiles(s.db))?.state,
        (state) => state === 'shipped',
      );
      expect(shipperRunning(autoShipFiles(s.db).locks)).toBe(false);
      expect((await verifyCentre(`${s.url.replace('@', `:${encodeURIComponent(s.password)}@`)}`)).problems).toEqual([]);
      expect(readFileSync(autoShipFiles(s.db).log, 'utf8')).not.toContain(s.password);
    });
  }

  it('install-codex, install-gemini and install-meerkat refuse a --ship URL with a password in one line', async () => {
    const s = await setUp();
    const withPassword = s.url.replace('postgres://postgres@', `postgres://postgres:${s.password}@`);
    for (const [installer, file] of [
      ['install-codex', 'c.json'],
      ['install-gemini', 'g.json'],
      ['install-meerkat', 'm.toml'],
    ] as const) {
      const refused = await runCli(
        [installer, '--file', join(s.dir, file), '--config', join(s.dir, 'hooks.json'), '--ship', withPassword],
        {
          env: s.env,
          cwd: s.dir,
        },
      );
      expect(refused.code, installer).toBe(2);
      expect(refused.stderr.trim().split('\n'), installer).toHaveLength(1);
      expect(refused.stderr).toMatch(/^hookledger: --ship: the URL must not carry the password/);
      expect(refused.stderr).not.toContain(s.password);
      expect(existsSync(join(s.dir, file))).toBe(false);
    }
  });

  it('one lock per ledger whatever the path: a hook reaching the ledger through a symlink sees the shipper that holds it by its real path', async () => {
    const s = await setUp();
    const codex = agents[0]!;
    const { command } = await codex.install(s);
    await runHook(command('PreToolUse'), codex.tool('s-1', 0), s);
    const linkDir = join(s.dir, 'link');
    symlinkSync(s.dir, linkDir);
    const viaLink = join(linkDir, 'ledger.db');
    const viaDots = join(s.dir, '.', 'link', '..', 'ledger.db');
    expect(autoShipFiles(viaLink)).toEqual(autoShipFiles(s.db));
    expect(autoShipFiles(viaDots)).toEqual(autoShipFiles(s.db));

    // A shipper holds the lock by the real path; an end event through the symlinked path only marks "ship again".
    const held = ShipperLock.tryAcquire(autoShipFiles(s.db).locks, 1000);
    expect(held).not.toBeNull();
    try {
      const linked = { shell: (command('Stop') as { shell: string }).shell.replace(s.db, viaLink) };
      expect(linked.shell).toContain(viaLink);
      const r = await runHook(linked, codex.end.payload('s-1'), s);
      expect(r.code, r.stderr).toBe(0);
      expect(shipAgainMarked(autoShipFiles(s.db))).toBe(true);
      await sleep(1500);
      expect(existsSync(autoShipFiles(s.db).log)).toBe(false); // no shipper started
      const status = await runCli(['ship', '--status', '--db', viaLink, '--json'], { env: s.env });
      expect(JSON.parse(status.stdout)).toMatchObject({ running: true });
    } finally {
      held!.release();
    }
    // Let go, the next end event through the symlink starts the one shipper, which ships it all.
    const r = await runHook({ shell: (command('Stop') as { shell: string }).shell.replace(s.db, viaLink) }, codex.end.payload('s-1'), s);
    expect(r.code, r.stderr).toBe(0);
    const local = countLocal(s.db);
    await waitFor(
      'the records to ship',
      () => centreCounts(s.database),
      (c) => c.n >= local,
    );
    expect(await centreCounts(s.database)).toEqual({ n: local, distinct: local });
  });

  it('one lock per ledger through a hard link too: a shipper holding it by another name makes the event only mark, and a manual ship wait', async () => {
    const s = await setUp();
    const codex = agents[0]!;
    const { command } = await codex.install(s);
    for (let n = 0; n < 2; n++) expect((await runHook(command('PreToolUse'), codex.tool('s-1', n), s)).code).toBe(0);
    // Another directory, another name, the same file: different real paths, one identity.
    const otherDir = join(tempDir(), 'elsewhere');
    mkdirSync(otherDir);
    const alias = join(otherDir, 'alias.db');
    linkSync(s.db, alias);
    const [byPath, byIdentity] = autoShipFiles(s.db).locks;
    const [aliasByPath, aliasByIdentity] = autoShipFiles(alias).locks;
    expect(aliasByPath).not.toBe(byPath);
    expect(aliasByIdentity).toBe(byIdentity);
    expect(byIdentity).toMatch(/ship-locks\/\d+-\d+\.lock$/);

    const fullUrl = s.url.replace('postgres://postgres@', `postgres://postgres:${encodeURIComponent(s.password)}@`);
    const shipEnv = { ...s.env, HOOKLEDGER_SHIP_TO: fullUrl };
    // A shipper through the hard link, holding the lock through a long debounce (it opens no ledger meanwhile:
    // SQLite names a ledger's WAL by its path, so a ledger must not be written through two names at once).
    const held = startCli(['ship', '--background', '--db', alias], { env: { ...shipEnv, HOOKLEDGER_SHIP_DEBOUNCE_MS: '120000' } });
    const status = async (db: string) => JSON.parse((await runCli(['ship', '--status', '--db', db, '--json'], { env: s.env })).stdout);
    try {
      await waitFor(
        'the shipper through the hard link',
        () => status(alias),
        (st) => st.running === true,
        30_000,
      );
      // Seen through the ledger's own name: the same holder.
      expect(await status(s.db)).toMatchObject({ running: true, holder: { pid: held.child.pid, command: 'ship --background' } });
      const ended = await runHook(command('Stop'), codex.end.payload('s-1'), s);
      expect(ended.code, ended.stderr).toBe(0);
      await sleep(1500);
      expect(
        existsSync(autoShipFiles(s.db).log),
        existsSync(autoShipFiles(s.db).log) ? readFileSync(autoShipFiles(s.db).log, 'utf8') : '',
      ).toBe(false); // the event started no shipper
      // A manual ship through the ledger's own name waits for the one holding it through the link.
      const manual = startCli(['ship', '--db', s.db, '--json'], { env: shipEnv });
      await waitFor(
        'the manual ship to wait',
        () => manual.output.stderr,
        (e) => /waiting for it/.test(e),
        30_000,
      );
      expect(manual.output.stderr).toMatch(
        new RegExp(
          `^hookledger: ship: another shipper \\(pid ${held.child.pid}, ship --background\\) holds .*ledger\\.db; waiting for it\n$`,
        ),
      );
      expect(await centreCounts(s.database)).toEqual({ n: 0, distinct: 0 });
      held.child.kill('SIGKILL');
      const done = await manual.exited;
      expect(done.code, manual.output.stderr).toBe(0);
      expect(JSON.parse(manual.output.stdout).shipped.invocations).toBe(3);
    } finally {
      held.child.kill('SIGKILL');
      await held.exited;
    }
    expect(countLocal(s.db)).toBe(3);
    expect(await centreCounts(s.database)).toEqual({ n: 3, distinct: 3 });
    expect((await verifyCentre(fullUrl)).problems).toEqual([]);
  });
});
