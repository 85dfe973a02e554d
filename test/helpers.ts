import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach } from 'vitest';
import { defineHooks, type HookDefinition, type HookSetDefinition } from '../src/domain/hooks.js';
import { openLedger, type Ledger } from '../src/ledger/open.js';
import { createRunner, type Runner } from '../src/runner/runner.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/**
 * A fresh directory for a case of `it.concurrent`, removed after the whole file: `tempDir`'s
 * per-test cleanup would remove it while another case still runs in it.
 */
export function concurrentDir(): string {
  concurrentBase ??= mkdtempSync(join(tmpdir(), 'hookledger-concurrent-'));
  const dir = join(concurrentBase, String((concurrentCases += 1)));
  mkdirSync(dir);
  return dir;
}
let concurrentBase: string | undefined;
let concurrentCases = 0;
afterAll(() => {
  if (concurrentBase) rmSync(concurrentBase, { recursive: true, force: true });
  concurrentBase = undefined;
});

/** A fresh directory removed after the test. */
export function tempDir(prefix = 'hookledger-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A real ledger file in a fresh directory, closed after the test. */
export function tempLedger(): { ledger: Ledger; path: string; dir: string } {
  const dir = tempDir();
  const path = join(dir, 'ledger.db');
  const ledger = openLedger({ path });
  cleanups.push(() => {
    if (ledger.sqlite.open) ledger.close();
  });
  return { ledger, path, dir };
}

/** A runner over a fresh ledger for the given hooks. */
export function setup(
  hooks: HookDefinition[],
  options: Partial<Omit<HookSetDefinition, 'hooks'>> = {},
): { runner: Runner; ledger: Ledger; path: string; dir: string } {
  const hookSet = defineHooks({ name: 'test', version: '1', ...options, hooks });
  const { ledger, path, dir } = tempLedger();
  const runner = createRunner({ hookSet, ledger });
  cleanups.unshift(() => void runner.close({ deadlineMs: 0 }));
  return { runner, ledger, path, dir };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves after `ms` or when the signal fires, whichever is first. */
export function sleepUnlessAborted(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Polls until `check` returns true (background work), failing after `timeoutMs`. */
export async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

export const bash = (command: string) => ({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command } }) as const;
