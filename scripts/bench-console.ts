/**
 * Console speed on a large ledger (issue 14): each page's server time (p50 ≤ 100 ms) and its
 * first render in headless Chromium (≤ 1 s), on the built package (dist/).
 *
 *   npm run generate:ledger -- --out /tmp/hookledger-1m.db      # a 1,000,000-invocation ledger
 *   npm run bench:console -- --db /tmp/hookledger-1m.db [--runs 21]
 *
 * Server time is the console's own `Server-Timing` (query + render, before the first byte is
 * sent); the floor is a request that touches nothing (/favicon.ico), measured in the same run.
 * The ledger is opened read-only, as `hookledger console` does: run `hookledger hooks --db ...`
 * once first so that the hook-health rollup exists (a read-only console cannot build it).
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { launchChromium, runHookledger, startConsole, TEST_TOKEN } from './console-support.js';

const { values } = parseArgs({ options: { db: { type: 'string' }, runs: { type: 'string' }, renders: { type: 'string' } } });
const db = values.db ?? '/tmp/hookledger-1m.db';
const runs = Number(values.runs ?? 21);
const renders = Number(values.renders ?? 5);
if (!existsSync(db)) {
  process.stderr.write(`bench:console: no ledger at ${db}: npm run generate:ledger -- --out ${db}\n`);
  process.exit(2);
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
};
const fmt = (ms: number) => `${ms.toFixed(1).padStart(7)} ms`;

process.stdout.write(`building the hook-health rollup (hookledger hooks) ...\n`);
await runHookledger(['hooks', '--db', db, '--json']);
const server = await startConsole(db);
try {
  const login = await fetch(`${server.url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: TEST_TOKEN }),
  });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const get = async (path: string) => {
    const started = performance.now();
    const res = await fetch(`${server.url}${path}`, { headers: { cookie } });
    const body = await res.text();
    if (res.status >= 300) throw new Error(`${path}: HTTP ${res.status}: ${body.slice(0, 300)}`);
    const timing = /dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '');
    return { server: timing ? Number(timing[1]) : NaN, total: performance.now() - started, body };
  };
  const first = (body: string, pattern: RegExp) => {
    const m = pattern.exec(body);
    if (!m) throw new Error(`no ${pattern} on the page`);
    return m[1]!;
  };
  const sessions = await get('/sessions');
  const denials = await get('/denials');
  const sessionHref = first(sessions.body, /href="(\/sessions\/[^"?]+)"/);
  const invocationHref = first(denials.body, /href="(\/invocations\/\d+)"/);
  const nextDenials = first(denials.body, /rel="next" href="([^"]+)"/).replace(/&amp;/g, '&');
  const pages = [
    '/sessions',
    '/sessions?decision=deny&since=7d',
    sessionHref,
    '/denials',
    nextDenials,
    '/denials?tool=Bash&group-by=day',
    '/denials?since=7d&group-by=reason',
    invocationHref,
    '/hooks',
    '/hooks?since=7d',
    '/replays',
    '/integrity',
  ];
  const floor: number[] = [];
  for (let k = 0; k < runs; k++) {
    const started = performance.now();
    await fetch(`${server.url}/favicon.ico`);
    floor.push(performance.now() - started);
  }
  const floorP50 = quantile(floor, 0.5);
  process.stdout.write(
    `\nledger ${db}; ${runs} requests per page after 2 warm-ups; floor (empty request, round trip) p50 ${floorP50.toFixed(2)} ms\n\n`,
  );
  process.stdout.write(`${'page'.padEnd(44)} server p50   server p99   round trip p50   ×floor\n`);
  let worst = 0;
  for (const path of pages) {
    await get(path);
    await get(path);
    const server: number[] = [];
    const total: number[] = [];
    for (let k = 0; k < runs; k++) {
      const r = await get(path);
      server.push(r.server);
      total.push(r.total);
    }
    const p50 = quantile(server, 0.5);
    worst = Math.max(worst, p50);
    const label = path.length > 43 ? `${path.slice(0, 42)}…` : path;
    process.stdout.write(
      `${label.padEnd(44)} ${fmt(p50)}  ${fmt(quantile(server, 0.99))}  ${fmt(quantile(total, 0.5))}  ${(quantile(total, 0.5) / floorP50).toFixed(0).padStart(7)}\n`,
    );
  }
  process.stdout.write(`\nworst page server p50 ${worst.toFixed(1)} ms (target ≤ 100 ms): ${worst <= 100 ? 'PASS' : 'FAIL'}\n`);

  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addCookies([{ name: 'hookledger_console', value: cookie.split('=')[1]!, url: server.url }]);
    const page = await context.newPage();
    process.stdout.write(
      `\nfirst render in headless Chromium (${renders} loads per page, median): first contentful paint (the load event where Chromium reports none), load event\n`,
    );
    let worstRender = 0;
    for (const path of pages) {
      const fcp: number[] = [];
      const load: number[] = [];
      for (let k = 0; k < renders; k++) {
        await page.goto(`${server.url}${path}`, { waitUntil: 'load' });
        const t = await page.evaluate<{ fcp: number; load: number }>(
          `new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => {
             const p = performance.getEntriesByName('first-contentful-paint')[0];
             const n = performance.getEntriesByType('navigation')[0];
             done({ fcp: p ? p.startTime : n.loadEventEnd, load: n.loadEventEnd });
           })))`,
        );
        fcp.push(t.fcp);
        load.push(t.load);
      }
      const f = quantile(fcp, 0.5);
      worstRender = Math.max(worstRender, f);
      const label = path.length > 43 ? `${path.slice(0, 42)}…` : path;
      process.stdout.write(`${label.padEnd(44)} FCP ${fmt(f)}   load ${fmt(quantile(load, 0.5))}\n`);
    }
    process.stdout.write(
      `\nworst first render ${worstRender.toFixed(0)} ms (target ≤ 1000 ms): ${worstRender <= 1000 ? 'PASS' : 'FAIL'}\n`,
    );
  } finally {
    await browser.close();
  }
} finally {
  await server.stop();
}
