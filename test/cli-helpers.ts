import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..');
const entry = join(root, 'src/cli/bin.ts');
/** tsx's loader by absolute URL, so the CLI can run from any working directory. */
export const tsxLoader = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A CLI child process started by `startCli`: its output so far, and its end. */
export interface StartedCli {
  child: ChildProcess;
  /** What it has written so far (filled as it writes). */
  output: { stdout: string; stderr: string };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts the real CLI in a child process (from source, through tsx), as a user or Claude Code
 * would, for tests that act on it while it runs (a signal mid-run). Stdin stays open.
 */
export function startCli(args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string } = {}): StartedCli {
  const child = spawn(process.execPath, ['--import', tsxLoader, entry, ...args], {
    cwd: options.cwd ?? root,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout!.on('data', (c: Buffer) => (output.stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (output.stderr += c.toString()));
  child.stdin!.on('error', () => {});
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  return { child, output, exited };
}

/**
 * Runs `node ARGS` in a child process and collects its exit code and output: stdin gets
 * `input` (or nothing), the environment is this process's plus `env`.
 */
export function runNode(args: string[], options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: options.cwd ?? root,
      env: { ...process.env, ...options.env },
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    if (child.stdin) {
      child.stdin.on('error', () => {});
      child.stdin.end(options.input);
    }
  });
}

/**
 * Runs the real CLI in a child process (from source, through tsx), as a user or Claude Code
 * would: argv, stdin, environment, exit code.
 */
export async function runCli(
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<CliResult> {
  const { child, output, exited } = startCli(args, options);
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
  child.stdin!.end(options.input ?? '');
  try {
    const { code } = await exited;
    return { code, stdout: output.stdout, stderr: output.stderr };
  } finally {
    clearTimeout(timer);
  }
}
