import { parseArgs } from 'node:util';
import { config as zodConfig } from 'zod';
import { describeThrown } from '../domain/errors.js';
import type { Command } from './command.js';
import type { CliIo } from './io.js';

/**
 * A direct entry for one agent's command hook (`hookledger claude`, `codex`, `gemini`),
 * without command discovery: what the esbuild bundles (`scripts/build-bundle.ts` →
 * dist/bundle/NAME.mjs) start from, so that the process an agent starts per event loads one
 * file. Never exits 1: a flag it cannot parse is answered like any other failure to decide
 * (exit 2, the reason on stderr).
 */
export function runHookBin(name: string, command: Command, argv: string[] = process.argv.slice(2)): void {
  // One event per process: zod's JIT (compiling each schema's parser with new Function on first
  // use) costs more than it saves when every schema is used about once.
  zodConfig({ jitless: true });
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
  const finish = (code: number) => process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  let values;
  try {
    ({ values } = parseArgs({
      args: argv[0] === name ? argv.slice(1) : argv,
      options: command.options,
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`hookledger could not decide: ${name}: ${describeThrown(error)}\n`);
    finish(2);
    return;
  }
  command.run({ values, positionals: [] }, io).then(finish, (error: unknown) => {
    process.stderr.write(`hookledger could not decide: ${describeThrown(error)}\n`);
    finish(2);
  });
}
