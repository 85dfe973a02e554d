import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { deny, modify } from '../../src/domain/results.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { replay } from '../../src/replay/replay.js';
import { createRunner } from '../../src/runner/runner.js';
import { launchChromium, logIn, runHookledger, startConsole, type RunningConsole } from '../../scripts/console-support.js';

// Agent- and hook-supplied text is hostile: markup, script, javascript: URLs, bidi and control
// characters, megabyte strings. It goes through every page; nothing may run and the layout must hold.
const PWN = 'window.__pwned=1';
const XSS = `<script>${PWN}</script><img src=x onerror="${PWN}"><svg onload="${PWN}"></svg>"'><iframe src="javascript:${PWN}">`;
const JS_URL = `javascript:${PWN}//`;
const BIDI = 'invoice\u202Efdp.exe \u2066isolate\u2069 zero\u200Bwidth bell\u0007 \u001b[31mred\u001b[0m nul\u0000 line\u2028sep';
const MEGA = `${'M'.repeat(1_048_576)}${XSS}`;
/** Hook results are capped at 1 MiB (larger ones are recorded as invalid), so theirs are a fifth of that. */
const LARGE = `${'L'.repeat(200_000)}${XSS}`;

let dir: string;
let db: string;
let server: RunningConsole;
let browser: Browser;

async function record(path: string): Promise<void> {
  const hooks = (version: string, rewriteId: string) =>
    defineHooks({
      name: `<b>set</b>${BIDI}`,
      version,
      hooks: [
        {
          id: `<img src=x onerror="${PWN}">`,
          point: 'pre_tool_use',
          capability: 'guardrail',
          priority: 1,
          run: (inv) =>
            version === '1' && JSON.stringify(inv.toolInput).includes('deny')
              ? deny(`${XSS} ${BIDI} ${JS_URL} ${LARGE}`, 'policy_violation')
              : undefined,
        },
        {
          id: rewriteId,
          point: 'pre_tool_use',
          capability: 'guardrail',
          priority: 2,
          run: (inv) =>
            JSON.stringify(inv.toolInput).includes('rewrite') ? modify({ command: `${LARGE}\n${XSS}`, url: JS_URL }, XSS) : undefined,
        },
        {
          id: `observer ${BIDI}`,
          point: ['pre_tool_use', 'user_prompt_submit'],
          priority: 3,
          run: () => {
            throw new Error(`${XSS} ${BIDI}`);
          },
        },
      ],
    });
  const ledger = SqliteLedger.open({ path });
  try {
    const runner = createRunner({ hookSet: hooks('1', JS_URL), ledger });
    const common = { agent: XSS, cwd: BIDI };
    await runner.run({
      point: 'pre_tool_use',
      sessionId: JS_URL,
      toolName: XSS,
      toolUseId: BIDI,
      toolInput: { command: `deny ${XSS}`, url: JS_URL, big: MEGA },
      ...common,
    });
    await runner.run({
      point: 'pre_tool_use',
      sessionId: XSS,
      toolName: 'Bash',
      toolUseId: 'toolu_rewrite',
      toolInput: { command: `rewrite ${BIDI}` },
      ...common,
    });
    await runner.run({ point: 'user_prompt_submit', sessionId: JS_URL, prompt: MEGA, ...common });
    await runner.close({ deadlineMs: 1000 });
    await replay({ ledger, hookSet: hooks('2', `${XSS}-v2`) });
  } finally {
    await ledger.close();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookledger-hostile-'));
  db = join(dir, 'hostile.db');
  await record(db);
  server = await startConsole(db);
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Visits a page and checks that nothing ran, nothing left the origin, no javascript: link exists and the layout holds. */
async function visit(page: Page, path: string, width: number): Promise<string> {
  const response = await page.goto(`${server.url}${path}`);
  expect(response!.status(), path).toBe(200);
  const body = await response!.text();
  expect(body.length, `${path}: megabyte values are folded`).toBeLessThan(400_000);
  await page.waitForLoadState('load');
  expect(await page.evaluate<unknown>('window.__pwned'), path).toBeUndefined();
  const hrefs = await page.evaluate<string[]>(
    `[...document.querySelectorAll('[href],[src],[action]')].map((e) => e.getAttribute('href') ?? e.getAttribute('src') ?? e.getAttribute('action'))`,
  );
  for (const href of hrefs) expect(href, `${path}: ${href}`).toMatch(/^(\/(?![/\\])|#[a-z-]+$)/);
  expect(await page.evaluate<number>('document.querySelectorAll("script:not([src]), iframe, img, svg, object, embed").length'), path).toBe(
    0,
  );
  const handlers = `[...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length`;
  expect(await page.evaluate<number>(handlers), path).toBe(0);
  const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
  expect(overflow, `${path} at ${width}px`).toBeLessThanOrEqual(1);
  return (await page.textContent('main')) ?? '';
}

describe('hostile agent and hook input through every console page', () => {
  for (const width of [1280, 390]) {
    it(`runs nothing, links nowhere else and keeps the layout at ${width}px`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 } });
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('dialog', (d) => {
        problems.push(`dialog: ${d.message()}`);
        void d.dismiss();
      });
      page.on('request', (r) => {
        if (!r.url().startsWith(server.url)) problems.push(`request to ${r.url()}`);
      });
      await logIn(page, server.url, server.token);
      const sessions = await visit(page, '/sessions', width);
      expect(sessions).toContain(JS_URL);
      const sessionLinks = await page.evaluate<string[]>(
        `[...document.querySelectorAll('tbody a[href^="/sessions/"]')].map((a) => a.getAttribute('href'))`,
      );
      expect(sessionLinks).toHaveLength(2);
      for (const href of sessionLinks) {
        const text = await visit(page, href, width);
        expect(text).toMatch(/⟨U\+202E⟩|&lt;script|<script>/);
      }
      for (const group of ['hook', 'tool', 'reason', 'session', 'day']) await visit(page, `/denials?group-by=${group}`, width);
      const denials = await visit(page, `/denials?hook=${encodeURIComponent(`<img src=x onerror="${PWN}">`)}`, width);
      expect(denials).toContain('<img src=x onerror=');
      for (const id of [1, 2, 3]) {
        const text = await visit(page, `/invocations/${id}`, width);
        expect(text).not.toContain('\u202E');
        expect(text).toContain('⟨U+202E⟩');
      }
      const explained = await visit(page, `/invocations/${encodeURIComponent(BIDI)}`, width);
      expect(explained).toContain('Invocation #1');
      expect(await page.locator('pre.diff').count()).toBe(0);
      await visit(page, '/invocations/2', width);
      expect(await page.locator('pre.diff .dl.add').count()).toBeGreaterThan(0);
      await visit(page, '/hooks', width);
      await expect.poll(() => page.locator('.chart[data-drawn]').count()).toBe(3);
      await visit(page, `/hooks?hook=${encodeURIComponent(`observer ${BIDI}`)}`, width);
      await visit(page, '/replays', width);
      const run = await visit(page, '/replays/1', width);
      expect(run).toContain('newly allowed');
      expect(run).toContain('<img src=x onerror=');
      expect(await page.locator('table.hook-diff tbody tr').count()).toBeGreaterThan(0);
      await visit(page, '/integrity', width);
      expect(problems).toEqual([]);
      await context.close();
    }, 240_000);
  }

  it('the audit report of the same ledger runs nothing and fetches nothing', async () => {
    const out = join(dir, 'audit.html');
    await runHookledger(['report', '--since', '1d', '--out', out, '--db', db]);
    const text = readFileSync(out, 'utf8');
    expect(text.length).toBeLessThan(400_000);
    expect(text).not.toMatch(/<(script|img|svg|iframe)\b/i);
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const requests: string[] = [];
    await page.route('**/*', (route) => {
      requests.push(route.request().url());
      return route.abort();
    });
    await page.setContent(text, { waitUntil: 'load' });
    expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    expect(
      await page.evaluate<number>(
        `[...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length`,
      ),
    ).toBe(0);
    expect(requests).toEqual([]);
    expect(await page.textContent('body')).toContain('⟨U+202E⟩');
    expect(await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth')).toBeLessThanOrEqual(1);
    await page.close();
  }, 120_000);

  it('answers a hostile filter value with one escaped line', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await logIn(page, server.url, server.token);
    const response = await page.goto(`${server.url}/denials?since=${encodeURIComponent(XSS)}`);
    expect(response!.status()).toBe(400);
    expect(await page.textContent('[role=alert]')).toContain('since:');
    expect(await page.evaluate<unknown>('window.__pwned')).toBeUndefined();
    await context.close();
  }, 60_000);
});
