import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { hookSetsInForce } from '../../src/ledger/queries/hook-sets.js';
import { createRunner } from '../../src/runner/runner.js';
import { launchChromium, makeDemoLedger, runHookledger } from '../../scripts/console-support.js';
import { bash, tempLedger } from '../helpers.js';

let dir: string;
let db: string;
let browser: Browser;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookledger-report-'));
  db = join(dir, 'demo.db');
  await makeDemoLedger(db);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('hookledger report', () => {
  it('writes one self-contained, printable HTML file with every section of the period', async () => {
    const out = join(dir, 'audit.html');
    const printed = await runHookledger(['report', '--since', '1d', '--out', out, '--db', db]);
    expect(printed).toMatch(/wrote .*audit\.html .*intact/);
    const html = readFileSync(out, 'utf8');
    for (const section of [
      'Sessions (2)',
      'Denials by hook (10)',
      'Denials by reason',
      'Failures and timeouts',
      'Hook-set versions in force',
      'Replay runs (1)',
      'Integrity',
    ]) {
      expect(html).toContain(section);
    }
    expect(html).toContain('demo-guardrails');
    expect(html).toContain('license-check');
    expect(html).toMatch(/<code class="hash">[0-9a-f]{64}<\/code>/);
    // Nothing to fetch: no script, no external reference of any kind.
    expect(html).not.toMatch(/<script|<link|<img|<iframe|\bsrc=|\bhref=|url\(|@import/i);

    const page = await browser.newPage();
    const requests: string[] = [];
    await page.route('**/*', (route) => {
      requests.push(route.request().url());
      return route.abort();
    });
    await page.setContent(html, { waitUntil: 'load' });
    expect(requests).toEqual([]);
    expect(await page.locator('h2').count()).toBe(7);
    await page.emulateMedia({ media: 'print' });
    const pdf = await page.pdf({ format: 'A4' });
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdf.length).toBeGreaterThan(10_000);
    await page.close();
  }, 120_000);

  it('reports an empty period as empty', async () => {
    const out = join(dir, 'empty.html');
    await runHookledger(['report', '--since', '3d', '--until', '2d', '--out', out, '--db', db]);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('Sessions (0)');
    expect(html).toContain('No sessions in this period.');
    expect(html).toContain('No denials in this period.');
  }, 60_000);

  it('refuses a bad period and a missing --out with one line', async () => {
    await expect(runHookledger(['report', '--db', db])).rejects.toThrow(/exit 2: hookledger: --out FILE is required/);
    await expect(runHookledger(['report', '--since', '1h', '--until', '2h', '--out', join(dir, 'x.html'), '--db', db])).rejects.toThrow(
      /exit 2: hookledger: --since: 1h is not before --until 2h/,
    );
  }, 60_000);
});

describe('hookSetsInForce', () => {
  it('lists each hook-set version that decided invocations in the period, with counts and first/last use', async () => {
    const { ledger } = tempLedger();
    const version = (v: string) =>
      defineHooks({ name: 'team', version: v, hooks: [{ id: 'watch', point: 'pre_tool_use', run: () => undefined }] });
    const t0 = Date.now();
    const one = createRunner({ hookSet: version('1'), ledger });
    await one.run(bash('ls'));
    await one.run(bash('pwd'));
    const two = createRunner({ hookSet: version('2'), ledger });
    await two.run(bash('ls'));
    const sets = hookSetsInForce(ledger, t0 - 1000, Date.now() + 1000);
    expect(sets.map((s) => [s.name, s.version, s.invocations])).toEqual([
      ['team', '1', 2],
      ['team', '2', 1],
    ]);
    expect(sets[0]!.firstAt).toBeLessThanOrEqual(sets[0]!.lastAt);
    expect(hookSetsInForce(ledger, 0, t0 - 1000)).toEqual([]);
  });
});
