import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, type CliResult } from '../cli-helpers.js';

const ROOT = join(import.meta.dirname, '../..');
export const WIRE_HOOKS = join(ROOT, 'test/fixtures/agents/wire-hooks.mjs');

/** One row of a wire table: what the agent sends, what must come back. */
export interface WireCase {
  name: string;
  /** The stdin text (an object is sent as JSON). */
  input: string | Record<string, unknown>;
  exit: 0 | 2;
  /** The stdout JSON; null = stdout must be empty. */
  json: unknown;
  /** The recorded decision, when the invocation is recorded. */
  decision?: string;
  stderr?: RegExp;
  args?: string[];
  /** Run through `hookledger <agent>` from source instead of the bundle install-* writes. */
  viaCli?: boolean;
}

/** The bundle an agent starts (dist/bundle/<agent>.cjs), as install-codex / install-gemini write it. */
function runBundle(agent: string, args: string[], input: string): Promise<CliResult> {
  const bundle = join(ROOT, 'dist/bundle', `${agent}.cjs`);
  if (!existsSync(bundle)) throw new Error(`${bundle} is missing: run npm run build first`);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bundle, ...args], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.on('error', () => {});
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

/** Runs every case through the real command (the bundle, or the CLI), a few at a time. */
export async function runWireCases(agent: 'codex' | 'gemini', cases: readonly WireCase[], db: string): Promise<Map<string, CliResult>> {
  const results = new Map<string, CliResult>();
  const queue = [...cases];
  const worker = async () => {
    for (let c = queue.shift(); c !== undefined; c = queue.shift()) {
      const input = typeof c.input === 'string' ? c.input : JSON.stringify(c.input);
      const args = ['--config', WIRE_HOOKS, '--db', db, ...(c.args ?? [])];
      results.set(c.name, c.viaCli ? await runCli([agent, ...args], { input, timeoutMs: 60_000 }) : await runBundle(agent, args, input));
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  return results;
}
