/** Shared by the benchmark, load and crash scripts: percentiles, a plain table, flags, a seeded PRNG. */

import { loadavg } from 'node:os';

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
}

export function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

export function printTable(header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((r) => r.map(String))];
  const widths = header.map((_, c) => Math.max(...cells.map((r) => r[c]!.length)));
  for (const [i, row] of cells.entries()) {
    console.log(row.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  '));
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
}

/** Reads `--name value` or `--name=value` from the command line. */
export function flag(name: string, fallback: string): string {
  const args = process.argv;
  for (let i = 0; i < args.length; i++) {
    if (args[i] === `--${name}` && args[i + 1] !== undefined) return args[i + 1]!;
    if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3);
  }
  return fallback;
}

/** mulberry32: a small, fast, seeded PRNG, so that a run can be repeated with the same seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The three in-process hooks of the serve benchmarks (bench-claude.ts, bench-postgres.ts), as the
 * source of an array `HOOKS` of run functions and of the hook list using it: a guardrail that
 * denies `rm -rf`, a guardrail that allows, an observer. Observers run first, so all three hooks
 * run before the deny ends the pass.
 */
export const BENCH_HOOK_BODY = `
    (inv) => String(inv.toolInput?.command ?? '').includes('rm -rf') ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf' } : undefined,
    () => undefined,
    () => undefined`;
export const BENCH_HOOKS = `[
    { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', priority: 10, run: HOOKS[0] },
    { id: 'no-secrets', point: 'pre_tool_use', match: 'Bash|Write|Edit', capability: 'guardrail', priority: 20, run: HOOKS[1] },
    { id: 'audit', point: 'pre_tool_use', priority: 0, run: HOOKS[2] },
  ]`;

/** The hook set file of the serve benchmarks (ES module, `hooks` export). */
export const BENCH_HOOKS_JS = `const HOOKS = [${BENCH_HOOK_BODY}];\nexport const hooks = { name: 'bench', version: '1', hooks: ${BENCH_HOOKS} };\n`;

/** The 1, 5 and 15 minute load averages, for a benchmark's header lines. */
export const loadAverages = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
