/**
 * What the console's browser tests, benchmark and screenshot script share: Debian's Chromium
 * driven by playwright-core (playwright's own browser download cannot work offline), and the
 * built console (dist/) started as a user would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const bin = join(root, 'bin', 'hookledger.js');

/** Chromium: $HOOKLEDGER_CHROMIUM, else Debian's package. */
export const chromiumPath = process.env.HOOKLEDGER_CHROMIUM ?? '/usr/bin/chromium';

/** Without the networking flags Chromium keeps calling home, which floods a closed network. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(`Chromium not found at ${chromiumPath}: apt-get install -y chromium (or set HOOKLEDGER_CHROMIUM to a Chromium binary)`);
  }
  return chromium.launch({ executablePath: chromiumPath, args: CHROMIUM_ARGS, headless: true, timeout: 60_000 });
}

export interface RunningConsole {
  url: string;
  token: string;
  child: ChildProcess;
  stderr: () => string;
  stop(): Promise<void>;
}

export const TEST_TOKEN = 'console-test-token-0123456789';

/** Starts `hookledger console` (the built package) on a free port and waits for its URL. */
export async function startConsole(db: string, extra: string[] = [], token = TEST_TOKEN): Promise<RunningConsole> {
  if (!existsSync(join(root, 'dist', 'console', 'assets', 'console.js'))) {
    throw new Error('the console is not built: run npm run build');
  }
  const child = spawn(process.execPath, [bin, 'console', '--db', db, '--port', '0', '--token', token, '--json', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const url = await new Promise<string>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`console did not start within 60 s: ${stderr}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      stdout += c.toString();
      const line = stdout.split('\n')[0];
      if (stdout.includes('\n') && line) {
        clearTimeout(timer);
        done((JSON.parse(line) as { url: string }).url);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`console exited (${code}): ${stderr}`));
    });
  });
  return {
    url: url.replace(/\/$/, ''),
    token,
    child,
    stderr: () => stderr,
    stop: () =>
      new Promise<void>((done) => {
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

/** Logs a page in through the form, as a person would. */
export async function logIn(page: Page, base: string, token: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.fill('input[type=password]', token);
  await Promise.all([page.waitForURL(/\/sessions/), page.click('button[type=submit]')]);
}

/** Runs the built CLI to completion; rejects with its stderr on a non-zero exit. */
export function runHookledger(args: string[], cwd = root): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('exit', (code) => (code === 0 ? done(out) : fail(new Error(`hookledger ${args.join(' ')}: exit ${code}: ${err}`))));
  });
}

/** The demo ledger with one replay run (examples/hooks.ts), as the screenshots and tests use it. */
export async function makeDemoLedger(db: string): Promise<void> {
  await runHookledger(['demo', '--db', db]);
  await runHookledger(['replay', '--config', join(root, 'examples', 'hooks.ts'), '--db', db]);
}
