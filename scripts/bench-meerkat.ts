/**
 * meerkat start-up benchmark (not a timed test): `hookledger meerkat` per invocation (a
 * process per invocation, as meerkat starts a command hook) from its single-file bundle,
 * against `hookledger claude` from its bundle and `node -e 0`, interleaved in one run on this
 * machine, with the same three in-process hooks (meerkat's pre_tool_execution is
 * pre_tool_use). Prints p50/p99 and the ratios.
 *
 *   npm run bench:meerkat                     (BENCH_RUNS=40 for more samples)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildHookBundle, packageRootDir as root } from './build-bundle.js';
import { printTable, stats } from './bench-support.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const CLAUDE = readFileSync(join(root, 'test/fixtures/claude-code/01-pretooluse-bash-rm.json'), 'utf8');
const MEERKAT = JSON.stringify({
  point: 'pre_tool_execution',
  session_id: '0193f6c2-7d1e-7b55-9a51-3f0c2a9e4d10',
  turn_number: 3,
  tool_call: { tool_use_id: 'call_7', name: 'Bash', args: { command: 'rm -rf /' } },
});

const work = mkdtempSync(join(tmpdir(), 'hookledger-bench-meerkat-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));
// The bundles find migrations/ and node_modules/ two levels above themselves.
for (const name of ['migrations', 'node_modules']) symlinkSync(join(root, name), join(work, name));
await buildHookBundle('claude', join(work, 'dist', 'bundle', 'claude.cjs'));
await buildHookBundle('meerkat', join(work, 'dist', 'bundle', 'meerkat.cjs'));
writeFileSync(
  join(work, 'hooks.mjs'),
  `export const hooks = { name: 'bench', version: '1', hooks: [
  { id: 'audit', point: 'pre_tool_use', priority: 0, run: () => undefined },
  { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', priority: 10,
    run: (inv) => String(inv.toolInput?.command ?? '').includes('rm -rf') ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf' } : undefined },
  { id: 'no-secrets', point: 'pre_tool_use', match: 'Bash|Write', capability: 'guardrail', priority: 20, run: () => undefined },
] };\n`,
);

/** Wall time of one process from spawn to exit, ms; a deny must come back or the row is wrong. */
function timed(args: string[], input: string, expect: RegExp | null): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd: work, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', () => {
      if (expect && !expect.test(stdout)) reject(new Error(`unexpected answer: ${stdout}`));
      else resolve(Number(process.hrtime.bigint() - t0) / 1e6);
    });
    child.stdin.end(input);
  });
}

const rows: { label: string; run: () => Promise<number>; samples: number[] }[] = [
  { label: 'node -e 0 (baseline)', run: () => timed(['-e', '0'], '', null), samples: [] },
  {
    label: 'claude, bundle, .mjs config',
    run: () => timed([join(work, 'dist/bundle/claude.cjs'), '--config', 'hooks.mjs', '--db', 'c.db'], CLAUDE, /"deny"/),
    samples: [],
  },
  {
    label: 'meerkat, bundle, .mjs config',
    run: () => timed([join(work, 'dist/bundle/meerkat.cjs'), '--config', 'hooks.mjs', '--db', 'm.db'], MEERKAT, /"deny"/),
    samples: [],
  },
];
// Two warm-up rounds (the first run of a bundle writes its V8 code cache), then interleaved runs.
for (let i = 0; i < RUNS + 2; i += 1) {
  for (const row of rows) {
    const ms = await row.run();
    if (i >= 2) row.samples.push(ms);
  }
}
const base = stats(rows[0]!.samples).p50;
const claude = stats(rows[1]!.samples).p50;
printTable(
  ['per invocation (wall, ms)', 'p50', 'p99', 'x node -e 0', 'x claude'],
  rows.map((row) => {
    const s = stats(row.samples);
    return [row.label, s.p50.toFixed(1), s.p99.toFixed(1), (s.p50 / base).toFixed(2), (s.p50 / claude).toFixed(2)];
  }),
);
console.log(
  `\n${RUNS} runs each, interleaved; load average ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
