/**
 * Telemetry benchmark (not a timed test), measuring the built package (dist/, `npm run build`):
 *
 *   npm run bench:telemetry
 *   BENCH_INVOCATIONS=3000 BENCH_RUNS=30 BENCH_BASELINE_REF=<git ref> npm run bench:telemetry
 *
 * (a) The run path: `runner.run()` latency (what an agent waits for) through the CLI's runner
 *     (dist/cli/context.js runnerFor, so the real telemetry sink), with telemetry off, exporting
 *     to a live OTLP/HTTP receiver (a separate process), and pointed at a dead port; rounds are
 *     interleaved so machine noise hits each alike; ratios against "off" in the same run.
 * (b) Start-up: `hookledger claude` per event from the claude bundle (what Claude Code starts),
 *     telemetry off, against the bundle built from the commit before telemetry (BASELINE_REF,
 *     default: the parent of the commit that added src/telemetry/config.ts), and `node -e 0`.
 *     Also with telemetry on (live receiver): that row includes loading the SDK and the flush
 *     after the answer, which Claude Code also waits for before it reads the next event.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { packageRootDir as root } from './build-bundle.js';
import { printTable, stats } from './bench-support.js';

const INVOCATIONS = Number(process.env.BENCH_INVOCATIONS ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const PAYLOAD = readFileSync(join(root, 'test/fixtures/claude-code/01-pretooluse-bash-rm.json'), 'utf8');

const work = mkdtempSync(join(tmpdir(), 'hookledger-bench-telemetry-'));
// A benchmark stops by itself, whatever happens.
setTimeout(() => {
  console.error('bench:telemetry: gave up after 20 minutes');
  process.exit(1);
}, 20 * 60_000).unref();
const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

writeFileSync(
  join(work, 'hooks.mjs'),
  `export const hooks = { name: 'bench', version: '1', hooks: [
  { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', priority: 10,
    run: (inv) => String(inv.toolInput?.command ?? '').includes('rm -rf') ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf' } : undefined },
  { id: 'no-secrets', point: 'pre_tool_use', capability: 'guardrail', priority: 20, run: () => undefined },
  { id: 'audit', point: 'pre_tool_use', priority: 0, run: () => undefined },
] };\n`,
);

/** A live OTLP/HTTP receiver in its own process (answers 200 to every POST), as a collector would be. */
async function startReceiver(): Promise<string> {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `const s=require('node:http').createServer((q,r)=>{q.resume();q.on('end',()=>{r.writeHead(200,{'content-type':'application/json'});r.end('{}')})});s.listen(0,'127.0.0.1',()=>console.log(s.address().port))`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  children.push(child);
  const port = await new Promise<string>((resolve) => child.stdout!.once('data', (c: Buffer) => resolve(c.toString().trim())));
  return `http://127.0.0.1:${port}`;
}

function deadPort(): Promise<string> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(`http://127.0.0.1:${port}`));
    });
  });
}

// ---------------------------------------------------------------------------------------
// (a) the run path
// ---------------------------------------------------------------------------------------

type RunnerFor = (
  args: { values: Record<string, unknown>; positionals: string[] },
  io: unknown,
  options: unknown,
) => { run(i: unknown): Promise<{ decision: string }>; close(): Promise<void> };

async function runPath(live: string, dead: string): Promise<(string | number)[][]> {
  const dist = (p: string) => pathToFileURL(join(root, 'dist', p)).href;
  const { runnerFor } = (await import(dist('cli/context.js'))) as { runnerFor: RunnerFor };
  const { openLedger } = (await import(dist('ledger/open.js'))) as { openLedger: (o: { path: string }) => { close(): void } };
  const { loadHookSet } = (await import(dist('config/load.js'))) as { loadHookSet: (p: string) => Promise<unknown> };
  const hookSet = await loadHookSet(join(work, 'hooks.mjs'));
  const warnings: string[] = [];
  const io = (env: NodeJS.ProcessEnv) => ({
    stdout: process.stdout,
    stderr: { write: (line: string) => warnings.push(line.trim()) },
    stdin: process.stdin,
    env,
  });
  const configs = [
    { label: 'telemetry off', env: {} },
    { label: 'exporting to a live receiver', env: { OTEL_EXPORTER_OTLP_ENDPOINT: live } },
    { label: 'pointed at a dead port', env: { OTEL_EXPORTER_OTLP_ENDPOINT: dead } },
  ].map((c, i) => {
    const ledger = openLedger({ path: join(work, `run-${i}.db`) });
    const runner = runnerFor({ values: {}, positionals: [] }, io(c.env), { hookSet, ledger });
    return { ...c, ledger, runner, samples: [] as number[] };
  });
  const invocation = (i: number) => ({
    point: 'pre_tool_use',
    sessionId: 's-bench',
    toolName: 'Bash',
    toolUseId: `toolu_${i}`,
    toolInput: { command: i % 2 === 0 ? 'rm -rf /tmp/x' : 'ls' },
  });
  // Warm-up (JIT, SDK load for the exporting runners), then interleaved rounds of 100.
  for (const c of configs) for (let i = 0; i < 200; i++) await c.runner.run(invocation(i));
  for (let done = 0; done < INVOCATIONS; done += 100) {
    for (const c of configs) {
      for (let i = done; i < done + 100; i++) {
        const t0 = process.hrtime.bigint();
        await c.runner.run(invocation(i));
        c.samples.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
      // Let the event loop breathe between rounds, as between an agent's tool calls: batches go out.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
  for (const c of configs) {
    await c.runner.close();
    c.ledger.close();
  }
  const off = stats(configs[0]!.samples);
  const rows = configs.map((c) => {
    const s = stats(c.samples);
    return [c.label, s.n, s.p50.toFixed(0), s.p99.toFixed(0), `${(s.p50 / off.p50).toFixed(2)}x`, `${(s.p99 / off.p99).toFixed(2)}x`];
  });
  console.log(`warnings printed by the runners: ${warnings.length === 0 ? 'none' : warnings.map((w) => JSON.stringify(w)).join('; ')}`);
  return rows;
}

// ---------------------------------------------------------------------------------------
// (b) start-up of hookledger claude
// ---------------------------------------------------------------------------------------

/** The bundle from the commit before telemetry, built the same way into `work`. */
async function baselineBundle(): Promise<{ launcher: string; ref: string }> {
  const git = (...args: string[]) => execFileSync('git', ['-C', root, ...args], { encoding: 'utf8' }).trim();
  const added = git('log', '--format=%H', '--diff-filter=A', '--', 'src/telemetry/config.ts').split('\n').pop()!;
  const ref = process.env.BENCH_BASELINE_REF ?? `${added}^`;
  const dir = join(work, 'baseline');
  mkdirSync(dir);
  execFileSync('sh', ['-c', `git -C "${root}" archive "${ref}" src scripts migrations package.json | tar -x -C "${dir}"`]);
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
  const { buildClaudeBundle } = (await import(pathToFileURL(join(dir, 'scripts/build-bundle.ts')).href)) as {
    buildClaudeBundle: (out: string) => Promise<string>;
  };
  // An older build-bundle.ts takes the .mjs launcher's path; a newer one maps it to claude.cjs.
  return { launcher: await buildClaudeBundle(join(dir, 'dist', 'bundle', 'claude.mjs')), ref: git('rev-parse', '--short', ref) };
}

function timeProcess(args: string[], env: NodeJS.ProcessEnv, input: string | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd: work, env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (input !== null && (code !== 0 || !stdout.includes('"permissionDecision":"deny"') || stderr !== '')) {
        reject(new Error(`${args[0]} did not deny cleanly (exit ${code}): ${stdout.slice(0, 200)} ${stderr.slice(0, 200)}`));
      } else resolve(ms);
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input ?? '');
  });
}

async function startUp(live: string): Promise<(string | number)[][]> {
  const baseline = await baselineBundle();
  const current = join(root, 'dist', 'bundle', 'claude.cjs');
  const claude = (launcher: string, db: string) => [launcher, '--config', 'hooks.mjs', '--db', join(work, db)];
  const cases = [
    { label: 'node -e 0', run: () => timeProcess(['-e', '0'], {}, null) },
    { label: `claude bundle before telemetry (${baseline.ref})`, run: () => timeProcess(claude(baseline.launcher, 'b.db'), {}, PAYLOAD) },
    { label: 'claude bundle, telemetry off', run: () => timeProcess(claude(current, 'c.db'), {}, PAYLOAD) },
    {
      label: 'claude bundle, exporting (answer + flush)',
      run: () => timeProcess(claude(current, 'd.db'), { OTEL_EXPORTER_OTLP_ENDPOINT: live }, PAYLOAD),
    },
  ];
  const samples = cases.map(() => [] as number[]);
  for (const c of cases) await c.run(); // warm the page cache, write the V8 code caches, create the ledgers
  for (let r = 0; r < RUNS; r++) for (const [i, c] of cases.entries()) samples[i]!.push(await c.run());
  const before = stats(samples[1]!);
  const size = (launcher: string) =>
    `${Math.round(statSync(launcher.endsWith('.mjs') ? launcher.replace(/\.mjs$/, '.cjs') : launcher.replace(/\.cjs$/, '-bundle.cjs')).size / 1024)} KiB`;
  console.log(`bundle size: before ${size(baseline.launcher)}, now ${size(current)}`);
  return cases.map((c, i) => {
    const s = stats(samples[i]!);
    return [c.label, s.n, s.p50.toFixed(1), s.p99.toFixed(1), i === 0 ? '' : `${(s.p50 / before.p50).toFixed(2)}x`];
  });
}

const live = await startReceiver();
const dead = await deadPort();
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
console.log(`hookledger telemetry benchmark — node ${process.version}, ${cpus().length} CPU(s), load ${load()} at start`);
console.log(`\n(a) run path, dist runnerFor, 3 in-process hooks, ${INVOCATIONS} invocations per row (µs)`);
const runRows = await runPath(live, dead);
printTable(['configuration', 'n', 'p50 µs', 'p99 µs', 'p50 / off', 'p99 / off'], runRows);
console.log(`\n(b) hookledger claude per event (ms), ${RUNS} runs per row, interleaved`);
const startRows = await startUp(live);
printTable(['process', 'n', 'p50 ms', 'p99 ms', 'p50 / before'], startRows);
console.log(`\nload ${load()} at end`);
