import './one-event-zod.js';
import { parseArgs } from 'node:util';
import { resolveOnErrorPolicy } from '../adapters/claude.js';
import { meerkatFailureAnswer } from '../adapters/meerkat-output.js';
import { describeThrown } from '../domain/errors.js';
import { oneLine } from '../domain/text.js';
import { command } from './commands/meerkat.js';
import type { CliIo } from './io.js';

/**
 * A direct entry for `hookledger meerkat`, without command discovery: what the esbuild bundle
 * (`scripts/build-bundle.ts` → dist/bundle/meerkat.cjs) starts from, so that the process
 * meerkat starts per invocation loads one file. Always exits 0 with an answer: a flag it
 * cannot parse is answered like any other failure to decide (the error policy's answer).
 */
export function runMeerkatBin(argv: string[] = process.argv.slice(2)): void {
  const io: CliIo = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
  const finish = (code: number) => process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
  const undecided = (problem: string) => {
    process.stdout.write(`${JSON.stringify(meerkatFailureAnswer(problem, resolveOnErrorPolicy(undefined, process.env).policy))}\n`);
    process.stderr.write(`hookledger could not decide: ${oneLine(problem)}\n`);
    finish(0);
  };
  let values;
  try {
    ({ values } = parseArgs({
      args: argv[0] === 'meerkat' ? argv.slice(1) : argv,
      options: command.options,
      allowPositionals: true,
      strict: true,
    }));
  } catch (error) {
    undecided(`meerkat: ${describeThrown(error)}`);
    return;
  }
  command.run({ values, positionals: [] }, io).then(finish, (error: unknown) => undecided(describeThrown(error)));
}

runMeerkatBin();
