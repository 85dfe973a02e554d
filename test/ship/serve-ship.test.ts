import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runCli, startCli, type StartedCli } from '../cli-helpers.js';
import { sleep, tempDir } from '../helpers.js';
import { freshDatabase } from '../postgres/support.js';
import { centreCounts, waitFor } from './auto-support.js';
import { verifyCentre } from './support.js';
import { shipperHolder, shipperRunning } from '../../src/ledger/ship-lock.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { autoShipFiles, readShipStatus } from '../../src/ship/auto-files.js';

/**
 * `serve` shipping its ledger (HOOKLEDGER_SHIP_TO or --ship): the real server, its real
 * `ship --follow` child (the built CLI), real requests over HTTP, the test run's PostgreSQL.
 */

const HOOKS = {
  name: 'serve-ship',
  version: '1',
  hooks: [{ id: 'watch', point: 'pre_tool_use', timeoutMs: 5000, command: { command: 'true', args: [] } }],
};
const TOKEN = 'serve-ship-token';

const alive = (pid: number) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');

/** The pids of the `ship --follow` children serve has announced, in order. */
const followerPids = (serve: StartedCli) => [...serve.output.stderr.matchAll(/ship --follow, pid (\d+)\)/g)].map((m) => Number(m[1]));

async function startServe(dir: string, env: NodeJS.ProcessEnv, extra: string[] = []) {
  const serve = startCli(
    ['serve', '--config', join(dir, 'hooks.json'), '--db', join(dir, 'ledger.db'), '--port', '0', '--token', TOKEN, '--json', ...extra],
    { env },
  );
  const line = await waitFor(
    'serve to listen',
    () => serve.output.stdout,
    (out) => out.includes('\n'),
    60_000,
  );
  return { serve, url: (JSON.parse(line.split('\n')[0]!) as { url: string }).url };
}

async function post(url: string, n: number) {
  const res = await fetch(`${url}/v1/invocations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ point: 'pre_tool_use', sessionId: 'serve-1', toolName: 'Bash', toolInput: { command: `echo ${n}` } }),
  });
  expect(res.status).toBe(200);
}

describe('serve ships its ledger (HOOKLEDGER_SHIP_TO / --ship)', { timeout: 240_000 }, () => {
  it('ships what it records through a supervised ship --follow child, restarts it when it dies, stops it with serve; exactly once', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify(HOOKS));
    const { url: centre, name } = await freshDatabase('serveship');
    const password = decodeURIComponent(new URL(centre).password);
    // The whole URL, password included, in the environment: never on a command line.
    const { serve, url } = await startServe(dir, { HOME: dir, HOOKLEDGER_SHIP_TO: centre });
    try {
      for (let n = 0; n < 5; n++) await post(url, n);
      expect(
        await waitFor(
          '5 shipped',
          () => centreCounts(name),
          (c) => c.n >= 5,
        ),
      ).toEqual({ n: 5, distinct: 5 });
      const [first] = followerPids(serve);
      expect(first).toBeGreaterThan(0);
      expect(readFileSync(`/proc/${first}/cmdline`, 'utf8')).not.toContain(password);

      // The follower killed: serve says so and starts another, which ships the rest once.
      process.kill(first!, 'SIGKILL');
      await waitFor(
        'a new follower',
        () => followerPids(serve),
        (pids) => pids.length >= 2,
        30_000,
      );
      expect(serve.output.stderr).toMatch(/hookledger serve: ship: the shipper \(pid \d+\) ended \(SIGKILL\); restarting in/);
      for (let n = 5; n < 9; n++) await post(url, n);
      expect(
        await waitFor(
          '9 shipped',
          () => centreCounts(name),
          (c) => c.n >= 9,
        ),
      ).toEqual({ n: 9, distinct: 9 });

      const second = followerPids(serve).at(-1)!;
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
      expect(alive(second)).toBe(false);
      expect(serve.output.stderr).not.toContain(password);
    } finally {
      serve.child.kill('SIGKILL');
    }
    expect((await verifyCentre(centre)).problems).toEqual([]);

    // serve killed outright: its follower notices the pipe close and stops too.
    const again = await startServe(dir, { HOME: dir, HOOKLEDGER_SHIP_TO: centre });
    try {
      await post(again.url, 9);
      expect(
        await waitFor(
          '10 shipped',
          () => centreCounts(name),
          (c) => c.n >= 10,
        ),
      ).toEqual({ n: 10, distinct: 10 });
      const follower = followerPids(again.serve)[0]!;
      again.serve.child.kill('SIGKILL');
      await again.serve.exited;
      await waitFor(
        'the follower to stop',
        () => alive(follower),
        (a) => !a,
        30_000,
      );
    } finally {
      again.serve.child.kill('SIGKILL');
    }
  });

  it("one shipper per ledger beside serve: a hook's end event only marks, a manual ship is refused naming the follower, a background one leaves; every record once", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify(HOOKS));
    const db = join(dir, 'ledger.db');
    const { url: centre, name } = await freshDatabase('serveship');
    const password = decodeURIComponent(new URL(centre).password);
    const withoutPassword = new URL(centre);
    withoutPassword.password = '';
    const env = { HOME: dir, HOOKLEDGER_SHIP_TO: centre, HOOKLEDGER_SHIP_DEBOUNCE_MS: '200' };
    const files = autoShipFiles(db);
    const { serve, url } = await startServe(dir, env);
    try {
      for (let n = 0; n < 3; n++) await post(url, n);
      await waitFor(
        '3 shipped',
        () => centreCounts(name),
        (c) => c.n >= 3,
      );
      const follower = followerPids(serve)[0]!;
      const status = JSON.parse((await runCli(['ship', '--status', '--db', db, '--json'], { env })).stdout);
      expect(status).toMatchObject({ running: true, holder: { pid: follower, command: 'ship --follow' } });

      // A Claude Code hook on serve's ledger ends a turn: it records, marks "ship again" and starts no shipper.
      const stop = await runCli(['claude', '--config', join(dir, 'hooks.json'), '--db', db, '--ship-to', withoutPassword.toString()], {
        env: { HOME: dir, PGPASSWORD: password, HOOKLEDGER_SHIP_TO: '' },
        input: JSON.stringify({ hook_event_name: 'Stop', session_id: 'serve-1', stop_hook_active: false, cwd: dir }),
      });
      expect(stop.code, stop.stderr).toBe(0);
      expect(stop.stderr).toBe('');
      // A manual ship: one line naming the follower, exit 3.
      const manual = await runCli(['ship', '--db', db], { env });
      expect(manual.code).toBe(3);
      expect(manual.stderr.trimEnd().split('\n')).toHaveLength(1);
      expect(manual.stderr).toContain(`hookledger: another shipper (pid ${follower}, ship --follow) holds ${db} and keeps shipping it`);
      expect(manual.stderr).not.toContain(password);
      // A background shipper (what a hook racing the follower's start would have started): leaves at once, saying who ships.
      const background = await runCli(['ship', '--background', '--db', db], { env });
      expect(background.code, background.stderr).toBe(0);
      const log = readFileSync(files.log, 'utf8');
      expect(log).toMatch(
        new RegExp(
          `shipper pid \\d+: another shipper \\(pid ${follower}, ship --follow\\) holds ${db.replaceAll('.', '\\.')}; it ships these records`,
        ),
      );
      expect(log).not.toMatch(/ started, shipping /);
      // The follower shipped the hook's record: every record once.
      await waitFor(
        '4 shipped',
        () => centreCounts(name),
        (c) => c.n >= 4,
      );
      expect(alive(follower)).toBe(true);
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
    } finally {
      serve.child.kill('SIGKILL');
    }
    // Stopped with "ship again" set (the hook's mark), the follower handed it to a background shipper, which found nothing left.
    await waitFor(
      'the background shipper',
      () => readShipStatus(files)?.state,
      (state) => state === 'shipped',
      60_000,
    );
    await waitFor(
      'the lock to be free',
      () => shipperRunning(files.locks),
      (running) => !running,
      30_000,
    );
    expect(readShipStatus(files)).toMatchObject({ invocations: 0 });
    expect(readFileSync(files.log, 'utf8').match(/ started, shipping /g)).toHaveLength(1);
    expect(await centreCounts(name)).toEqual({ n: 4, distinct: 4 });
    expect((await verifyCentre(centre)).problems).toEqual([]);
  });

  it("serve's follower waits while a background shipper holds the ledger (one line with its pid), then ships everything once", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify(HOOKS));
    const db = join(dir, 'ledger.db');
    await SqliteLedger.open({ path: db }).close();
    const { url: centre, name } = await freshDatabase('serveship');
    const env = { HOME: dir, HOOKLEDGER_SHIP_TO: centre };
    // A hook's background shipper, held in its debounce: it has the ledger's lock.
    const background = startCli(['ship', '--background', '--db', db], { env: { ...env, HOOKLEDGER_SHIP_DEBOUNCE_MS: '120000' } });
    onTestFinished(() => void background.child.kill('SIGKILL'));
    const files = autoShipFiles(db);
    await waitFor(
      'the background shipper',
      () => shipperHolder(files.locks)?.pid,
      (pid) => pid === background.child.pid,
      30_000,
    );
    const { serve, url } = await startServe(dir, env);
    try {
      await waitFor(
        'the follower to wait',
        () => serve.output.stderr,
        (e) =>
          e.includes(
            `hookledger serve: ship: another shipper (pid ${background.child.pid}, ship --background) holds ${db}; waiting for it`,
          ),
        30_000,
      );
      for (let n = 0; n < 3; n++) await post(url, n);
      await sleep(1000);
      expect(await centreCounts(name)).toEqual({ n: 0, distinct: 0 }); // one shipper at a time: the follower waits
      expect(followerPids(serve)).toHaveLength(1); // waiting, not ended and restarted
      background.child.kill('SIGKILL');
      await waitFor(
        '3 shipped',
        () => centreCounts(name),
        (c) => c.n >= 3,
      );
      expect(await centreCounts(name)).toEqual({ n: 3, distinct: 3 });
      expect(shipperHolder(files.locks)).toMatchObject({ pid: followerPids(serve)[0], command: 'ship --follow' });
      serve.child.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
    } finally {
      serve.child.kill('SIGKILL');
    }
    expect((await verifyCentre(centre)).problems).toEqual([]);
  });

  it('refuses --ship with a password, or with a PostgreSQL ledger, in one line before serving', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify(HOOKS));
    const { url: centre } = await freshDatabase('serveship');
    const password = decodeURIComponent(new URL(centre).password);
    const base = ['serve', '--config', join(dir, 'hooks.json'), '--port', '0', '--token', TOKEN];
    const withPassword = await runCli([...base, '--db', join(dir, 'ledger.db'), '--ship', centre], {
      env: { HOME: dir, HOOKLEDGER_SHIP_TO: '' },
    });
    expect(withPassword.code).toBe(2);
    expect(withPassword.stderr.trim().split('\n')).toHaveLength(1);
    expect(withPassword.stderr).toMatch(/^hookledger: --ship: the URL must not carry the password/);
    expect(withPassword.stderr).not.toContain(password);
    const central = new URL(centre);
    central.password = '';
    const toPostgres = await runCli([...base, '--db', centre, '--ship', central.toString()], {
      env: { HOME: dir, HOOKLEDGER_SHIP_TO: '' },
    });
    expect(toPostgres.code).toBe(2);
    expect(toPostgres.stderr).toMatch(/^hookledger: --ship: the ledger \(.*\) is not a local SQLite file; nothing to ship\n$/);
    expect(toPostgres.stderr).not.toContain(password);
  });
});
