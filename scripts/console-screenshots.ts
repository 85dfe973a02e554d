/**
 * Screenshots of every console page on the demo ledger, into docs/console/ (shown in
 * docs/console.md and the README). Measures the built package: run `npm run build` first.
 *
 *   npm run console:screenshots
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchChromium, logIn, makeDemoLedger, root, startConsole } from './console-support.js';

const out = join(root, 'docs', 'console');
mkdirSync(out, { recursive: true });
const dir = mkdtempSync(join(tmpdir(), 'hookledger-shots-'));
const db = join(dir, 'demo.db');
await makeDemoLedger(db);
const server = await startConsole(db);
const browser = await launchChromium();
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  await page.goto(`${server.url}/`);
  await page.screenshot({ path: join(out, 'login.png') });
  await logIn(page, server.url, server.token);
  const denied = await page.goto(`${server.url}/denials`).then(() => page.getAttribute('table:not(.groups) tbody tr td a', 'href'));
  const session = await page.goto(`${server.url}/sessions`).then(() => page.getAttribute('tbody tr td a', 'href'));
  const shots: [string, string][] = [
    ['sessions', '/sessions'],
    ['session', session!],
    ['denials', '/denials?group-by=hook'],
    ['explain', denied!],
    ['hooks', '/hooks'],
    ['replays', '/replays'],
    ['replay', '/replays/1'],
    ['integrity', '/integrity'],
  ];
  for (const [name, path] of shots) {
    await page.goto(`${server.url}${path}`);
    if (name === 'integrity') await page.waitForSelector('.verdict', { timeout: 30_000 });
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(out, `${name}.png`), fullPage: name !== 'session' });
    process.stdout.write(`wrote docs/console/${name}.png\n`);
  }
  const phone = await context.browser()!.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 1 });
  const small = await phone.newPage();
  await logIn(small, server.url, server.token);
  for (const [name, path] of [
    ['phone-denials', '/denials'],
    ['phone-explain', denied!],
  ] as const) {
    await small.goto(`${server.url}${path}`);
    await small.waitForTimeout(300);
    await small.screenshot({ path: join(out, `${name}.png`) });
    process.stdout.write(`wrote docs/console/${name}.png\n`);
  }
} finally {
  await browser.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
}
