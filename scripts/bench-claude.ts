/**
 * Claude Code integration benchmark (not a timed test): prints one table, measured side by
 * side in one run on this machine.
 *
 *   npm run bench:claude                      (= node --import tsx scripts/bench-claude.ts)
 *   BENCH_RUNS=40 BENCH_REQUESTS=4000 npm run bench:claude
 *   BENCH_ONLY=serve npm run bench:claude     (only (b); BENCH_ONLY=per-event: only (a) and (c))
 *   BENCH_ONLY=import npm run bench:claude    (only (d))
 *
 * (a) `hookledger claude` per event (a process per event, as Claude Code starts it), wall
 *     time p50/p99 and CPU time (user + system) against `node -e 0` in the same run: first the
 *     exact command `install-claude` writes (node on the bundle's launcher, dist/bundle/claude.cjs,
 *     with a 3-hook .mjs config), run through `sh -c` as Claude Code does, with a warm daemon
 *     (the steady state of a session) and with HOOKLEDGER_DAEMON=off (the in-process path an
 *     event takes when no daemon answers); the daemon's own CPU per event is printed below
 *     the table; then the bundle without the shell, the compiled files (what `npm run build`
 *     makes), and a .ts config; and a floor: one plain node script that does only the durable
 *     write and the answer.
 * (b) `hookledger serve`: round trip of a PreToolUse event through POST /claude with 3
 *     hooks, at 1 and at 16 concurrent clients (keep-alive), p50/p99 and invocations/s.
 * (c) the same 3 hooks as Claude Code command hooks: a Node process per hook, run in
 *     parallel as Claude Code does.
 * (d) a config that imports 'hookledger' (`import { defineHooks, deny } from 'hookledger'`, as
 *     the README writes one) against the same hooks in a plain config and `node -e 0`, without
 *     and with a daemon; and, for the figure before the package root shared the bundle's copy
 *     (src/cli/shared-library.ts), the same config importing dist/index.js by path.
 *
 * Everything is built into a temporary directory (esbuild, no type check), so the bench
 * never touches dist/. Runs are interleaved so that machine noise hits every row alike.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BENCH_HOOK_BODY, BENCH_HOOKS, BENCH_HOOKS_JS } from './bench-support.js';
import { ThreadClocks, threadDelta, type ThreadReading } from './bench-threads.js';
import { floorWriter } from './bench-write-floor.js';
import { buildClaudeBundle, buildCompiledTree, packageRootDir as root, writePackageRoot } from './build-bundle.js';
import { defaultHookledgerBin, hookledgerCommand } from '../src/adapters/claude-settings.js';
import { listDaemons, stopDaemon } from '../src/cli/daemon/admin.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const ONLY = process.env.BENCH_ONLY;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const TOKEN = 'bench-token-0123456789abcdef0123';
const PAYLOAD = readFileSync(new URL('../test/fixtures/claude-code/01-pretooluse-bash-rm.json', import.meta.url), 'utf8');

// ---------------------------------------------------------------------------------------
// Build
// ---------------------------------------------------------------------------------------

const work = mkdtempSync(join(tmpdir(), 'hookledger-bench-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

async function prepare(): Promise<void> {
  // The compiled layout `npm run build` produces (dist/ beside migrations/), via esbuild.
  await buildCompiledTree(join(work, 'dist'));
  await buildClaudeBundle(join(work, 'dist', 'bundle', 'claude.cjs'));
  writePackageRoot(join(work, 'dist'));
  cpSync(join(root, 'migrations'), join(work, 'migrations'), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
  // The package's name and exports, so that a config here imports 'hookledger' as this copy (self-reference).
  const { name, exports } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { name: string; exports: unknown };
  writeFileSync(join(work, 'package.json'), JSON.stringify({ name, type: 'module', exports }));

  writeFileSync(join(work, 'hooks.js'), BENCH_HOOKS_JS);
  writeFileSync(join(work, 'hooks.mjs'), BENCH_HOOKS_JS);
  // (d): the same hooks written the README's way, through the package root; and through the compiled tree by path.
  const packageHooks = (from: string) =>
    `import { defineHooks, deny } from '${from}';\nconst HOOKS = [${BENCH_HOOK_BODY.replace("{ decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf' }", "deny('no rm -rf', 'safety_violation')")}];\nexport default defineHooks({ name: 'bench', version: '1', hooks: ${BENCH_HOOKS} });\n`;
  writeFileSync(join(work, 'hooks-package.mjs'), packageHooks('hookledger'));
  writeFileSync(join(work, 'hooks-tree.mjs'), packageHooks('./dist/index.js'));
  writeFileSync(
    join(work, 'hooks.ts'),
    `import type { Invocation } from '${join(root, 'src/index.js')}';\nconst HOOKS = [${BENCH_HOOK_BODY.replace('(inv)', '(inv: Invocation)').replace('inv.toolInput?.command', '(inv.toolInput as { command?: string } | null)?.command')}];\nexport const hooks = { name: 'bench-ts', version: '1', hooks: ${BENCH_HOOKS} };\n`,
  );
  writeFileSync(join(work, 'write-floor.cjs'), WRITE_FLOOR_SCRIPT);
  // (c): each hook as its own Claude Code command hook (Node, reading stdin).
  for (const [i, logic] of ['p.tool_input?.command?.includes("rm -rf") ? 2 : 0', '0', '0'].entries()) {
    writeFileSync(
      join(work, `cc-hook-${i}.mjs`),
      `let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{const p=JSON.parse(s);const code=${logic};if(code===2)process.stderr.write('no rm -rf');process.exit(code);});\n`,
    );
  }
}

/**
 * What any hook that records its decision durably pays at least: one CommonJS script that
 * reads stdin, parses it, opens a SQLite file with better-sqlite3 (WAL, NORMAL), writes the
 * event as `running`, decides, commits the decision in an IMMEDIATE transaction and prints the
 * answer. No hook set, validation, redaction or chain: the line below which `hookledger
 * claude` cannot go on this Node, measured in the same run.
 */
const WRITE_FLOOR_SCRIPT = `'use strict';
const Database = require(${JSON.stringify(join(root, 'node_modules', 'better-sqlite3'))});
const { readFileSync, writeSync } = require('node:fs');
const input = readFileSync(0, 'utf8');
const payload = JSON.parse(input);
const db = new Database(process.argv[2]);
db.pragma('busy_timeout = 10000');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS events (id INTEGER PRIMARY KEY, status TEXT, raw TEXT, decision TEXT)');
const id = db.prepare("INSERT INTO events (status, raw) VALUES ('running', ?)").run(input).lastInsertRowid;
const decision = String(payload.tool_input?.command ?? '').includes('rm -rf') ? 'deny' : 'allow';
const finish = db.prepare("UPDATE events SET status = 'completed', decision = ? WHERE id = ?");
db.transaction(() => finish.run(decision, id)).immediate();
writeSync(1, JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: decision, permissionDecisionReason: 'no rm -rf' } }) + '\\n');
`;

// ---------------------------------------------------------------------------------------
// Measure
// ---------------------------------------------------------------------------------------

interface Row {
  label: string;
  samples: number[];
  /** CPU time (user + system) of the process per run, ms, where measured. */
  cpu?: number[];
  note?: string;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Wall time of one process from spawn to exit, ms. */
function timeProcess(
  cmd: string,
  args: string[],
  input: string | null,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ms: number; code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(cmd, args, { cwd: work, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ms: Number(process.hrtime.bigint() - t0) / 1e6, code, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

/**
 * CPU time (user + system) of a process, ms: bash's `times` after it, whose second line is
 * what its children used, to the millisecond. Less sensitive to a loaded machine than wall time.
 */
async function cpuOf(cmd: string, args: string[], input: string | null, env?: NodeJS.ProcessEnv): Promise<number> {
  const { stderr } = await timeProcess('bash', ['-c', '"$@"; times >&2', 'bash', cmd, ...args], input, env);
  const children = stderr.trim().split('\n').at(-1) ?? '';
  const [user, system] = [...children.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60_000 + Number(m[2]) * 1000);
  if (user === undefined || system === undefined) throw new Error(`no CPU times from bash: ${stderr.slice(-200)}`);
  return user + system;
}

/**
 * The command `install-claude` writes for this package and a 3-hook .mjs config in the project
 * (bin, flags and quoting from the same functions), with `--db` added to keep the ledger here.
 */
function installedCommand(db: string): string {
  const { bin } = defaultHookledgerBin(work, work);
  return hookledgerCommand({ bin, configPath: join(work, 'hooks.mjs'), dbPath: db, projectDir: work });
}

async function perEventRows(): Promise<{ rows: Row[]; daemonCpu: string }> {
  const db = join(work, 'per-event.db');
  const node = process.execPath;
  const installed = installedCommand(db);
  // The daemon's sockets in a private directory of this run (src/cli/daemon/socket-place.ts).
  const sockets = join(work, 'daemon');
  mkdirSync(sockets, { mode: 0o700 });
  // Claude Code runs a command hook through the shell, with the project directory in the environment.
  const withDaemon = { ...process.env, CLAUDE_PROJECT_DIR: work, HOOKLEDGER_DAEMON: 'on', HOOKLEDGER_DAEMON_DIR: sockets };
  const inProcess = { ...process.env, CLAUDE_PROJECT_DIR: work, HOOKLEDGER_DAEMON: 'off' };
  const bundle = [join(work, 'dist/bundle/claude.cjs'), 'claude', '--config', 'hooks.mjs', '--db', db];
  const cases: Case[] = [
    { label: 'node -e 0 (baseline)', cmd: node, args: ['-e', '0'], input: null },
    { label: INSTALLED_WARM, cmd: '/bin/sh', args: ['-c', installed], input: PAYLOAD, env: withDaemon, check: true },
    { label: INSTALLED_COLD, cmd: '/bin/sh', args: ['-c', installed], input: PAYLOAD, env: inProcess, check: true },
    { label: 'claude, bundle, .mjs config (no shell, no daemon)', cmd: node, args: bundle, input: PAYLOAD, env: inProcess, check: true },
    {
      label: 'claude, compiled dist, .mjs config',
      cmd: node,
      args: [join(work, 'dist/cli/bin.js'), 'claude', '--config', 'hooks.mjs', '--db', db],
      input: PAYLOAD,
      check: true,
    },
    {
      label: 'claude, bundle, .ts config (tsx, no daemon)',
      cmd: node,
      args: [...bundle.slice(0, 3), 'hooks.ts', ...bundle.slice(4)],
      input: PAYLOAD,
      env: inProcess,
      check: true,
    },
    { label: 'Claude Code: 1 hook = 1 node process', cmd: node, args: [join(work, 'cc-hook-1.mjs')], input: PAYLOAD },
    {
      label: FLOOR,
      cmd: node,
      args: [join(work, 'write-floor.cjs'), join(work, 'write-floor.db')],
      input: PAYLOAD,
      check: true,
    },
  ];
  const rows: Row[] = cases.map((c) => ({ label: c.label, samples: [], cpu: [] }));
  const parallel: Row = { label: 'Claude Code: 3 hooks, 3 processes in parallel', samples: [] };
  const runParallel = async () => {
    const t0 = process.hrtime.bigint();
    await Promise.all([0, 1, 2].map((i) => timeProcess(node, [join(work, `cc-hook-${i}.mjs`)], PAYLOAD)));
    return Number(process.hrtime.bigint() - t0) / 1e6;
  };
  process.stderr.write(`installed command: ${installed}\n`);
  // Warm the file cache, write the V8 code cache, create the ledger and start the daemon once.
  for (const c of cases) await timeProcess(c.cmd, c.args, c.input, c.env);
  const daemon = await waitForDaemon(sockets);
  await timeProcess('/bin/sh', ['-c', installed], PAYLOAD, withDaemon); // the daemon's first event loads the hook set
  const daemonBefore = { cpu: processCpuMs(daemon.pid), events: (await daemonStatus(daemon.socket)).events };
  for (let r = 0; r < RUNS; r += 1) {
    await measureOnce(cases, rows);
    parallel.samples.push(await runParallel());
  }
  const events = (await daemonStatus(daemon.socket)).events - daemonBefore.events;
  const cpu = processCpuMs(daemon.pid) - daemonBefore.cpu;
  // Every warm event must have been decided by the daemon, or the row measured the fallback.
  if (events !== 2 * RUNS) throw new Error(`the daemon decided ${events} of the ${2 * RUNS} warm events`);
  const daemonCpu = `the daemon's own CPU: ${(cpu / events).toFixed(2)} ms per event (mean of ${events}; /proc/${daemon.pid}/stat, 10 ms ticks), on top of the client's`;
  await stopDaemon(daemon.socket);
  return { rows: [...rows, parallel], daemonCpu };
}

/**
 * (d): the README's config style (`import { defineHooks, deny } from 'hookledger'`) against the
 * same hooks in a plain .mjs and `node -e 0`, interleaved in one run, through the command
 * install-claude writes: without a daemon (the fallback path, and every event with
 * HOOKLEDGER_DAEMON=off) and with a warm one; plus the same config importing the compiled tree
 * (dist/index.js) by path, which is what 'hookledger' loaded before the package root shared
 * the bundle's copy. The bundle's V8 code cache holds what its first run compiled, as it does
 * for a user: so the plain configs run from a copy of the bundle (copy/dist/bundle) whose
 * cache a plain config wrote, and the package-import config from the one its own first run wrote.
 */
async function importRows(): Promise<Row[]> {
  const node = process.execPath;
  const sockets = join(work, 'daemon-import');
  mkdirSync(sockets, { mode: 0o700 });
  const copy = join(work, 'copy');
  cpSync(join(work, 'dist', 'bundle'), join(copy, 'dist', 'bundle'), { recursive: true, filter: (f) => !f.endsWith('.cache') });
  symlinkSync(join(work, 'migrations'), join(copy, 'migrations'));
  const withDaemon = { ...process.env, CLAUDE_PROJECT_DIR: work, HOOKLEDGER_DAEMON: 'on', HOOKLEDGER_DAEMON_DIR: sockets };
  const inProcess = { ...process.env, CLAUDE_PROJECT_DIR: work, HOOKLEDGER_DAEMON: 'off' };
  const installed = (config: string, env: NodeJS.ProcessEnv, packageDir = work): Omit<Case, 'label'> => {
    const { bin } = defaultHookledgerBin(packageDir, work);
    const command = hookledgerCommand({ bin, configPath: join(work, config), dbPath: join(work, 'import.db'), projectDir: work });
    return { cmd: '/bin/sh', args: ['-c', command], input: PAYLOAD, env, check: true };
  };
  // In this order the first run of each bundle writes its code cache (see above).
  const cases: Case[] = [
    { label: 'node -e 0 (baseline)', cmd: node, args: ['-e', '0'], input: null },
    { label: `${IMPORT_PLAIN}, no daemon`, ...installed('hooks.mjs', inProcess, copy) },
    { label: `${IMPORT_PACKAGE}, no daemon`, ...installed('hooks-package.mjs', inProcess) },
    { label: IMPORT_TREE, ...installed('hooks-tree.mjs', inProcess, copy) },
    { label: `${IMPORT_PLAIN}, warm daemon`, ...installed('hooks.mjs', withDaemon) },
    { label: `${IMPORT_PACKAGE}, warm daemon`, ...installed('hooks-package.mjs', withDaemon) },
  ];
  const rows: Row[] = cases.map((c) => ({ label: c.label, samples: [], cpu: [] }));
  for (const c of cases) await timeProcess(c.cmd, c.args, c.input, c.env);
  const daemon = await waitForDaemon(sockets);
  // Each config's first event in the daemon loads it there.
  for (const c of cases.filter((c) => c.env === withDaemon)) checked(await timeProcess(c.cmd, c.args, c.input, c.env), c.label);
  const eventsBefore = (await daemonStatus(daemon.socket)).events;
  for (let r = 0; r < RUNS; r += 1) await measureOnce(cases, rows);
  const events = (await daemonStatus(daemon.socket)).events - eventsBefore;
  // Two warm rows, each run twice per round (wall time, then CPU time).
  if (events !== 4 * RUNS) throw new Error(`the daemon decided ${events} of the ${4 * RUNS} warm events`);
  await stopDaemon(daemon.socket);
  return rows;
}

interface Case {
  label: string;
  cmd: string;
  args: string[];
  input: string | null;
  env?: NodeJS.ProcessEnv;
  check?: boolean;
}

/** Runs each case once, in order, adding its wall time and (in a second run) its CPU time to its row. */
async function measureOnce(cases: Case[], rows: Row[]): Promise<void> {
  for (const [i, c] of cases.entries()) {
    const run = await timeProcess(c.cmd, c.args, c.input, c.env);
    if (c.check) checked(run, c.label);
    rows[i]!.samples.push(run.ms);
    rows[i]!.cpu!.push(await cpuOf(c.cmd, c.args, c.input, c.env));
  }
}

const IMPORT_PLAIN = 'plain .mjs config, installed';
const IMPORT_PACKAGE = "import 'hookledger' config, installed";
const IMPORT_TREE = 'config importing dist/index.js (= before), no daemon';

const INSTALLED_WARM = 'claude as installed (sh -c), warm daemon';
const INSTALLED_COLD = 'claude as installed (sh -c), no daemon';
const FLOOR = 'floor: 1 node script, durable write + answer';

/** The daemon the first event started (the launcher starts it detached after its answer). */
async function waitForDaemon(sockets: string): Promise<{ socket: string; pid: number }> {
  for (let i = 0; i < 400; i += 1) {
    const [found] = (await listDaemons(sockets)).filter((d) => d.status !== null);
    if (found) return { socket: found.socket, pid: found.status!.pid };
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no daemon answered in ${sockets}`);
}

async function daemonStatus(socket: string): Promise<{ events: number }> {
  const [found] = (await listDaemons(dirname(socket))).filter((d) => d.socket === socket && d.status !== null);
  if (!found) throw new Error(`the daemon on ${socket} stopped answering`);
  return found.status!;
}

/** User + system CPU of a process so far, ms (/proc/PID/stat fields 14 and 15, in clock ticks of 10 ms). */
function processCpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Checks the adapter really denied, so a broken build cannot post a fast time. */
function checked(run: { code: number | null; stdout: string }, label: string): void {
  if (run.code !== 0 || !run.stdout.includes('"permissionDecision":"deny"') || run.stdout.includes('could not decide')) {
    throw new Error(`${label} did not deny (exit ${run.code}): ${run.stdout.slice(0, 300)}`);
  }
}

/** What the serve rows' tails overlapped, printed after the verdict line. */
const tailLines: string[] = [];

async function serveRows(): Promise<Row[]> {
  const child = spawn(
    process.execPath,
    [
      join(work, 'dist/cli/bin.js'),
      'serve',
      '--config',
      'hooks.js',
      '--db',
      join(work, 'serve.db'),
      '--port',
      '0',
      '--json',
      '--token',
      TOKEN,
    ],
    {
      cwd: work,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const { port } = await new Promise<{ port: number }>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]!));
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
  // The server's threads before any request: the checkpoint worker is not among them.
  const startupTids = new Set(child.pid === undefined ? [] : new ThreadClocks(child.pid).tids);
  const rows: Row[] = [];
  try {
    await clientLoop(port, 200); // warm-up: JIT, page cache
    const floor = await writeFloor(join(work, 'serve.db'));
    for (const clients of [1, 16]) {
      const samples: number[] = [];
      const gcBefore = await serverGcs(port);
      const t0 = process.hrtime.bigint();
      const probe = clients === 1 && child.pid !== undefined ? new ServerProbe(child.pid, startupTids) : undefined;
      await Promise.all(Array.from({ length: clients }, () => clientLoop(port, Math.ceil(REQUESTS / clients), samples, probe)));
      if (probe) tailLines.push(probe.describe());
      const rate = samples.length / (Number(process.hrtime.bigint() - t0) / 1e9);
      const gcs = (await serverGcs(port)) - gcBefore;
      const sorted = sortedSamples(samples);
      rows.push({
        label: `serve POST /claude, ${clients} client${clients > 1 ? 's' : ''}`,
        samples,
        note: `${Math.round(rate)} inv/s = ${(rate / floor.rate).toFixed(2)}x the write floor, p99 = ${(percentile(sorted, 99) / percentile(sorted, 50)).toFixed(2)}x p50, ${gcs} scavenges in ${samples.length} requests (${((100 * gcs) / samples.length).toFixed(2)}%)`,
      });
    }
    for (const withWrites of [false, true]) {
      const samples = await httpFloor(withWrites ? [join(work, 'serve.db'), join(work, 'http-floor.db')] : []);
      const sorted = sortedSamples(samples);
      rows.push({
        label: `HTTP floor, 1 client${withWrites ? ', + the writes' : ''}`,
        samples,
        note: `plain node:http server, same client, fixed answer${withWrites ? ', the write floor per request' : ', no writes'}: p99 = ${(percentile(sorted, 99) / percentile(sorted, 50)).toFixed(2)}x p50`,
      });
    }
    const floorSorted = sortedSamples(floor.samples);
    rows.push({
      label: 'write floor: sequential better-sqlite3 loop',
      samples: floor.samples,
      note: `${Math.round(floor.rate)} inv/s: the same row, outcomes and chain link in the same two durable transactions, p99 = ${(percentile(floorSorted, 99) / percentile(floorSorted, 50)).toFixed(2)}x p50`,
    });
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.on('exit', resolve));
  }
  return rows;
}

/** Starts the HTTP floor server (bench-http-floor.ts), measures REQUESTS requests from 1 client after a warm-up, stops it. */
async function httpFloor(ledgers: string[]): Promise<number[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'scripts/bench-http-floor.ts'), work, ...ledgers], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0]!) as { port: number }).port);
      });
      child.on('exit', (code) => reject(new Error(`the HTTP floor server exited with ${code}`)));
    });
    await clientLoop(port, 200);
    const samples: number[] = [];
    await clientLoop(port, REQUESTS, samples);
    return samples;
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.on('exit', resolve));
  }
}

/**
 * One keep-alive client: sends the PreToolUse request, waits for the whole answer, checks it
 * denied, sends the next. A bare socket (as wrk does), not node:http's client: on two cores the
 * client's own HTTP stack would otherwise take as much CPU as the server and bound the figure.
 */
function clientLoop(port: number, count: number, samples?: number[], probe?: ServerProbe): Promise<void> {
  const body = Buffer.from(PAYLOAD);
  const request = Buffer.concat([
    Buffer.from(
      `POST /claude HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${TOKEN}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`,
    ),
    body,
  ]);
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.setNoDelay(true);
    let buffer: Buffer = Buffer.alloc(0);
    let left = count;
    let t0 = 0n;
    const send = () => {
      probe?.before();
      t0 = process.hrtime.bigint();
      socket.write(request);
    };
    socket.on('connect', send);
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffer = buffer.length > 0 ? Buffer.concat([buffer, chunk]) : chunk;
      for (;;) {
        const headEnd = buffer.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const head = buffer.subarray(0, headEnd).toString('latin1');
        const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
        if (buffer.length < headEnd + 4 + length) return;
        const text = buffer.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
        if (!head.startsWith('HTTP/1.1 200') || !text.includes('"deny"')) {
          socket.destroy();
          return reject(new Error(`serve answered ${head.split('\r\n')[0]}: ${text.slice(0, 200)}`));
        }
        buffer = buffer.subarray(headEnd + 4 + length);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        samples?.push(ms);
        probe?.after(ms);
        if (--left === 0) {
          socket.end();
          return resolve();
        }
        send();
      }
    });
  });
}

/**
 * What each request of the 1-client row overlapped, read outside the timed span from the
 * server's threads (Linux /proc; nothing elsewhere) and this client's: whether the server's
 * deciding thread or the client waited for a CPU, whether the server's checkpoint worker (the
 * thread it starts after its first 64 commits, so not among `startupTids`) or its other helper
 * threads (V8's GC and compiler helpers, libuv) were scheduled in.
 */
class ServerProbe {
  private readonly server: ThreadClocks;
  private readonly client = new ThreadClocks();
  private readonly worker: Set<number>;
  private readonly reads: ThreadReading[] = [new Float64Array(0), new Float64Array(0)];
  readonly causes: { ms: number; serverWaitMs: number; clientWaitMs: number; workerRan: boolean; helpersRan: number }[] = [];

  constructor(pid: number, startupTids: ReadonlySet<number>) {
    this.server = new ThreadClocks(pid);
    this.worker = new Set(this.server.tids.flatMap((tid, i) => (startupTids.has(tid) ? [] : [i])));
  }

  before(): void {
    this.reads[0] = this.server.read();
    this.reads[1] = this.client.read();
  }

  after(ms: number): void {
    const server = threadDelta(this.reads[0]!, this.server.read(), this.worker);
    const client = threadDelta(this.reads[1]!, this.client.read());
    this.causes.push({
      ms,
      serverWaitMs: server.mainWaitMs,
      clientWaitMs: client.mainWaitMs,
      workerRan: server.watchedRan,
      helpersRan: server.othersRan,
    });
  }

  /** The slowest 1% of requests, by what they overlapped (each counted under its first cause). */
  describe(): string {
    const slow = [...this.causes].sort((a, b) => b.ms - a.ms).slice(0, Math.max(1, Math.ceil(this.causes.length / 100)));
    let serverWait = 0;
    let clientWait = 0;
    let helpers = 0;
    let worker = 0;
    for (const c of slow) {
      if (c.serverWaitMs >= 0.1) serverWait += 1;
      else if (c.clientWaitMs >= 0.1) clientWait += 1;
      else if (c.helpersRan > 0) helpers += 1;
      else if (c.workerRan) worker += 1;
    }
    return `slowest 1% of serve at 1 client (${slow.length}, from ${slow[slow.length - 1]!.ms.toFixed(2)} ms; server threads ${this.server.tids.length}, threads started after the first commits (the checkpoint worker): ${this.worker.size}): ${serverWait} the server's deciding thread waited >= 0.1 ms for a CPU, ${clientWait} the client did, ${helpers} the server's other threads ran (V8's GC helpers: a scavenge), ${worker} only its checkpoint worker ran, ${slow.length - serverWait - clientWait - helpers - worker} none of these`;
  }
}

/**
 * The server's young-generation GCs so far (scavenges: prom-client's `nodejs_gc_duration_seconds`
 * on GET /metrics). Per request, an upper bound on the share of requests that met one: below
 * about 0.5%, GC is out of the 99th percentile.
 */
async function serverGcs(port: number): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await response.text();
  const count = /^nodejs_gc_duration_seconds_count\{kind="minor"\} (\d+)/m.exec(text);
  return count ? Number(count[1]) : NaN;
}

/**
 * The write floor: a plain sequential better-sqlite3 loop that writes what serve wrote for its
 * last request (scripts/bench-write-floor.ts). No HTTP, parsing, hooks or redaction.
 */
async function writeFloor(servedDb: string): Promise<{ rate: number; samples: number[] }> {
  const { once, close } = await floorWriter(work, servedDb, join(work, 'floor.db'));
  for (let i = 0; i < 200; i += 1) once();
  const samples: number[] = [];
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < REQUESTS; i += 1) {
    const t = process.hrtime.bigint();
    once();
    samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const rate = REQUESTS / (Number(process.hrtime.bigint() - t0) / 1e9);
  await close();
  return { rate, samples };
}

function sortedSamples(samples: number[]): number[] {
  return [...samples].sort((a, b) => a - b);
}

function render(rows: Row[], baseline: number, cpuBaseline: number | null): string {
  const lines = [
    `| ${'what'.padEnd(50)} | ${'p50 ms'.padStart(7)} | ${'p99 ms'.padStart(7)} | ${'p50 / node -e 0'.padStart(15)} | ${'CPU p50 ms'.padStart(10)} | ${'CPU / node -e 0'.padStart(15)} | note`,
    `|${'-'.repeat(52)}|${'-'.repeat(9)}|${'-'.repeat(9)}|${'-'.repeat(17)}|${'-'.repeat(12)}|${'-'.repeat(17)}|------`,
  ];
  for (const row of rows) {
    const sorted = [...row.samples].sort((a, b) => a - b);
    const p50 = percentile(sorted, 50);
    const cpu =
      row.cpu && row.cpu.length > 0
        ? percentile(
            [...row.cpu].sort((a, b) => a - b),
            50,
          )
        : null;
    const cpuCells = cpu === null ? ['', ''] : [cpu.toFixed(1), cpuBaseline === null ? '' : `${(cpu / cpuBaseline).toFixed(2)}x`];
    lines.push(
      `| ${row.label.padEnd(50)} | ${p50.toFixed(2).padStart(7)} | ${percentile(sorted, 99).toFixed(2).padStart(7)} | ${`${(p50 / baseline).toFixed(2)}x`.padStart(15)} | ${cpuCells[0]!.padStart(10)} | ${cpuCells[1]!.padStart(15)} | ${row.note ?? `n=${row.samples.length}`}`,
    );
  }
  return lines.join('\n');
}

const loadAtStart = spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim().split(' ').slice(0, 3).join(' ');
await prepare();
const { rows: perEvent, daemonCpu } = ONLY === 'serve' || ONLY === 'import' ? { rows: [] as Row[], daemonCpu: '' } : await perEventRows();
const imported = ONLY === 'import' ? await importRows() : [];
const served = ONLY === 'per-event' || ONLY === 'import' ? [] : await serveRows();
// The floor: node -e 0 measured in this run (a serve-only run times it here).
const nodeRow = perEvent[0] ?? imported[0];
const floorSamples = nodeRow?.samples ?? [];
for (let i = 0; floorSamples.length < 5; i += 1) floorSamples.push((await timeProcess(process.execPath, ['-e', '0'], null)).ms);
const baseline = percentile(
  [...floorSamples].sort((a, b) => a - b),
  50,
);
const cpuFloor = nodeRow?.cpu ?? [];
const cpuBaseline =
  cpuFloor.length > 0
    ? percentile(
        [...cpuFloor].sort((a, b) => a - b),
        50,
      )
    : null;
const loadNow = () => spawnSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).stdout.trim().split(' ').slice(0, 3).join(' ');
process.stdout.write(
  `hookledger Claude Code benchmark — node ${process.version}, ${cpus().length} CPU(s), load ${loadAtStart} at the start and ${loadNow()} at the end, ${RUNS} runs per process row, ${REQUESTS} requests per serve row\n` +
    `wall time: spawn to exit, p50/p99; CPU: user + system of the process (bash \`times\`), p50; ratios against node -e 0 measured in the same run\n\n`,
);
process.stdout.write(`${render([...perEvent, ...imported, ...served], baseline, cpuBaseline)}\n`);
const floorRow = perEvent.find((r) => r.label === FLOOR);
if (floorRow && cpuBaseline !== null) {
  const p50 = (samples: number[]) => percentile(sortedSamples(samples), 50);
  const p99 = (samples: number[]) => percentile(sortedSamples(samples), 99);
  const floorP50 = p50(floorRow.samples);
  const floorCpu = p50(floorRow.cpu!);
  const nodeP99 = p99(perEvent[0]!.samples);
  const line = (row: Row) =>
    `${row.label}: p50 ${p50(row.samples).toFixed(1)} ms = ${(p50(row.samples) / baseline).toFixed(2)}x node -e 0 (${(p50(row.samples) / floorP50).toFixed(2)}x the floor), ` +
    `p99 ${p99(row.samples).toFixed(1)} ms = ${(p99(row.samples) / nodeP99).toFixed(2)}x node -e 0's p99; ` +
    `client CPU p50 ${p50(row.cpu!).toFixed(1)} ms = ${(p50(row.cpu!) / cpuBaseline).toFixed(2)}x (${(p50(row.cpu!) / floorCpu).toFixed(2)}x the floor)`;
  process.stdout.write(
    `\nissue 11 §4 (goal <= 1.25x node -e 0), the command install-claude writes:\n` +
      perEvent
        .filter((r) => r.label === INSTALLED_WARM || r.label === INSTALLED_COLD)
        .map((r) => `  ${line(r)}\n`)
        .join('') +
      `  ${daemonCpu}\n` +
      `  floor (durable write + answer in one node script): p50 ${floorP50.toFixed(1)} ms = ${(floorP50 / baseline).toFixed(2)}x node -e 0, CPU ${(floorCpu / cpuBaseline).toFixed(2)}x\n`,
  );
}
const tailRatio = (label: string) => {
  const row = served.find((r) => r.label.startsWith(label));
  if (row === undefined) return 'n/a';
  const sorted = sortedSamples(row.samples);
  return (percentile(sorted, 99) / percentile(sorted, 50)).toFixed(2);
};
if (served.length > 0)
  process.stdout.write(
    `\np99 / p50: serve at 1 client ${tailRatio('serve POST /claude, 1 client')} (goal <= 3); the write floor in the same run ${tailRatio('write floor')}\n` +
      `HTTP floors, same client, same run: a plain node:http server ${tailRatio('HTTP floor, 1 client')} (no writes), ${tailRatio('HTTP floor, 1 client, + the writes')} (+ the write floor per request)\n${tailLines.join('\n')}\n`,
  );
if (imported.length > 0 && cpuBaseline !== null) {
  const p50 = (samples: number[]) => percentile(sortedSamples(samples), 50);
  const p99 = (samples: number[]) => percentile(sortedSamples(samples), 99);
  const row = (label: string) => imported.find((r) => r.label === label)!;
  const against = (label: string, plainLabel: string) => {
    const [a, b] = [row(label), row(plainLabel)];
    return (
      `${label}: p50 ${p50(a.samples).toFixed(1)} ms vs ${p50(b.samples).toFixed(1)} plain (${(p50(a.samples) - p50(b.samples)).toFixed(1)} ms, ` +
      `${(p50(a.samples) / baseline).toFixed(2)}x vs ${(p50(b.samples) / baseline).toFixed(2)}x node -e 0), p99 ${p99(a.samples).toFixed(1)} vs ${p99(b.samples).toFixed(1)} ms; ` +
      `CPU p50 ${p50(a.cpu!).toFixed(1)} vs ${p50(b.cpu!).toFixed(1)} ms (${(p50(a.cpu!) - p50(b.cpu!)).toFixed(1)} ms)`
    );
  };
  process.stdout.write(
    `\nimport 'hookledger' in the config (goal: within ~5 ms per event of the plain config, same run), node -e 0 p50 ${baseline.toFixed(1)} ms, p99 ${p99(nodeRow!.samples).toFixed(1)} ms, CPU ${cpuBaseline.toFixed(1)} ms:\n` +
      `  ${against(`${IMPORT_PACKAGE}, no daemon`, `${IMPORT_PLAIN}, no daemon`)}\n` +
      `  ${against(`${IMPORT_PACKAGE}, warm daemon`, `${IMPORT_PLAIN}, warm daemon`)}\n` +
      `  before (a second copy of the library): ${against(IMPORT_TREE, `${IMPORT_PLAIN}, no daemon`)}\n`,
  );
}
