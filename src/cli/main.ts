import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { describeThrown, HookledgerError, UsageError } from '../domain/errors.js';
import type { Command } from './command.js';
import type { CliIo } from './io.js';
import { oneLine } from '../domain/text.js';

const commandsDir = new URL('./commands/', import.meta.url);

/**
 * The version in package.json, read when asked: src/cli, dist/cli and the dist/bundle all sit
 * two levels below the package root, which npm always installs with package.json.
 */
function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : 'unknown';
}

/**
 * Command modules are loaded on demand, one file per command, so that `hookledger claude`
 * (a process per agent event) pays only for the code it uses.
 */
async function loadCommand(name: string): Promise<Command | undefined> {
  if (!/^[a-z][a-z-]*$/.test(name)) return undefined;
  for (const ext of ['.js', '.ts']) {
    const url = new URL(`${name}${ext}`, commandsDir);
    if (existsSync(url)) return ((await import(url.href)) as { command: Command }).command;
  }
  return undefined;
}

async function listCommands(): Promise<[string, Command][]> {
  const names = readdirSync(commandsDir)
    .filter((f) => /^[a-z-]+\.(js|ts)$/.test(f) && !f.endsWith('.d.ts'))
    .map((f) => f.replace(/\.(js|ts)$/, ''));
  const loaded = await Promise.all([...new Set(names)].sort().map(async (n) => [n, await loadCommand(n)] as const));
  return loaded.filter((entry): entry is [string, Command] => entry[1] !== undefined);
}

async function help(io: CliIo): Promise<void> {
  const commands = await listCommands();
  const width = Math.max(...commands.map(([n]) => n.length));
  io.stdout.write(
    [
      'hookledger — a durable, audited hook runner for AI agents',
      '',
      'usage: hookledger <command> [options]     (hookledger <command> --help for its options)',
      '',
      ...commands.map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
      '',
      'Every command takes --db PATH (else $HOOKLEDGER_DB, else ~/.hookledger/ledger.db) and --json.',
      'Exit codes: 0 ok, 1 unexpected error or replay change, 2 bad usage/config/input, 3 ledger error, 4 not found, 5 integrity failure.',
      '',
    ].join('\n'),
  );
}

/** Runs the CLI; returns the exit code. Every failure is one line on stderr, never a stack trace. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  try {
    if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
      await help(io);
      return name === undefined ? 2 : 0;
    }
    if (name === '--version' || name === '-v') {
      io.stdout.write(`hookledger ${packageVersion()}\n`);
      return 0;
    }
    const command = await loadCommand(name);
    if (!command) throw new UsageError(`unknown command "${name}" (run hookledger --help for the list)`);
    return await runCommand(name, command, rest, io);
  } catch (error) {
    return reportError(error, io);
  }
}

/**
 * Runs one loaded command on its arguments (`--help`, parsing, errors as one line): main's work
 * after discovery, shared with the direct entries that skip discovery (ship-bin.ts).
 */
export async function runCommand(name: string, command: Command, rest: string[], io: CliIo): Promise<number> {
  try {
    if (rest.includes('--help') || rest.includes('-h')) {
      io.stdout.write(`usage: hookledger ${command.usage}\n`);
      return 0;
    }
    let parsed;
    try {
      parsed = parseArgs({ args: rest, options: command.options, allowPositionals: true, strict: true });
    } catch (error) {
      throw new UsageError(`${name}: ${describeThrown(error)}`);
    }
    return await command.run({ values: parsed.values, positionals: parsed.positionals }, io);
  } catch (error) {
    return reportError(error, io);
  }
}

/** Maps an error to one stderr line and an exit code. */
export function reportError(error: unknown, io: CliIo): number {
  if (error instanceof HookledgerError) {
    io.stderr.write(`hookledger: ${oneLine(error.message)}\n`);
    return error.exitCode;
  }
  io.stderr.write(`hookledger: internal error: ${oneLine(describeThrown(error))} (set HOOKLEDGER_DEBUG=1 for details)\n`);
  if (io.env.HOOKLEDGER_DEBUG) io.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
  return 1;
}

/**
 * The process entry (bin/hookledger.js; `run` is main, or a direct entry's own: ship-bin.ts).
 * Exits explicitly once output is flushed: a hook that left a timer or socket behind must not
 * keep the CLI (and so the agent) waiting.
 */
export function runCli(run: (argv: string[], io: CliIo) => Promise<number> = main): void {
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
  const finish = (code: number) => process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  run(process.argv.slice(2), io).then(finish, (error: unknown) => finish(reportError(error, io)));
}
