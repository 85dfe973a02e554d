/** Display formats shared by the console pages and the audit report (UTC, like every time hookledger prints). */

/** `2026-11-23 19:30:05Z`, or — for none. */
export function utc(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? '—' : `${d.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** µs as `412µs`, `3.2ms`, `1.25s`. */
export function duration(us: number | null | undefined): string {
  if (us === null || us === undefined) return '—';
  if (us < 1000) return `${Math.round(us)}µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 1 : 0)}ms`;
  return `${(us / 1_000_000).toFixed(2)}s`;
}

/** 1234567 → 1,234,567. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** 0.0123 → 1.2%. */
export function percent(rate: number): string {
  return `${(rate * 100).toFixed(rate > 0 && rate < 0.001 ? 2 : 1)}%`;
}
