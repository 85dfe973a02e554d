import { writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import { describeThrown } from '../domain/errors.js';
import type { Command, CommandArgs } from './command.js';
import { DAEMON_FLAG } from './daemon/socket-place.js';
import { readStdinSync, type CliIo } from './io.js';

/**
 * The entry of an agent's bundle (NAME-bundle.cjs): one event in this process, or, started by
 * the launcher (daemon/client.ts) as `NAME-local.cjs --hookledger-daemon SOCKET BUILD`, the
 * daemon that decides the following events.
 */
export function runAgentBin(name: string, command: Command): void {
  if (process.argv[2] === DAEMON_FLAG) {
    // Loaded only here: the daemon's net and worker_threads stay out of a process that decides one event.
    void import('./daemon/server.js').then(({ runDaemon }) =>
      runDaemon({ name, command, socketPath: process.argv[3] ?? '', buildId: process.argv[4] ?? '' }),
    );
  } else {
    runHookBin(name, command);
  }
}

/**
 * One agent command hook event decided in this process (`hookledger claude`, `codex`,
 * `gemini`), without command discovery: what the esbuild bundle (`scripts/build-bundle.ts` →
 * dist/bundle/NAME-bundle.cjs, started through NAME-local.cjs) runs when no daemon answers, so
 * that the process an agent starts per event loads one file. Never exits 1: a flag it cannot
 * parse is answered like any other failure to decide (exit 2, the reason on stderr).
 */
export function runHookBin(name: string, command: Command, argv: string[] = process.argv.slice(2)): void {
  const io = fdIo();
  const finish = (code: number) => io.stdout.write('', () => io.stderr.write('', () => process.exit(code)));
  void runHookArgv(name, command, argv, io).then(finish);
}

/**
 * Parses an agent command hook's argv (`NAME` first or not) and runs it; resolves to the exit
 * code and never rejects: a flag it cannot parse, or a throw, is the "could not decide" line
 * and exit 2. `prepare` may rewrite the parsed flags first (the daemon makes paths absolute
 * against its client's directory).
 */
export async function runHookArgv(
  name: string,
  command: Command,
  argv: string[],
  io: CliIo,
  prepare: (args: CommandArgs) => CommandArgs = (args) => args,
): Promise<number> {
  let args: CommandArgs;
  try {
    const { values } = parseArgs({
      args: argv[0] === name ? argv.slice(1) : argv,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    args = prepare({ values, positionals: [] });
  } catch (error) {
    io.stderr.write(`hookledger could not decide: ${name}: ${describeThrown(error)}\n`);
    return 2;
  }
  try {
    return await command.run(args, io);
  } catch (error) {
    io.stderr.write(`hookledger could not decide: ${describeThrown(error)}\n`);
    return 2;
  }
}

/**
 * The process's stdio without `process.stdin`/`stdout`/`stderr`, which for pipes (how every
 * agent starts a hook) are net.Sockets: creating them costs about 6 ms of a process that
 * starts for one event. Writes go straight to the descriptor; one that would block (a
 * non-blocking pipe that is full) hands the rest to the process stream, and `write('', cb)`
 * then waits for it to drain.
 */
function fdIo(): CliIo {
  const writer = (fd: 1 | 2, stream: () => NodeJS.WritableStream) => {
    let handedOver: NodeJS.WritableStream | null = null;
    return new Writable({
      write(chunk: Buffer, _encoding, callback) {
        if (handedOver !== null) return void handedOver.write(chunk, () => callback());
        let offset = 0;
        try {
          while (offset < chunk.length) offset += writeSync(fd, chunk, offset);
          callback();
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return callback(error as Error);
          handedOver = stream();
          handedOver.write(chunk.subarray(offset), () => callback());
        }
      },
    });
  };
  return {
    stdout: writer(1, () => process.stdout),
    stderr: writer(2, () => process.stderr),
    get stdin() {
      return process.stdin;
    },
    env: process.env,
    readStdin: () => handedStdin() ?? readStdinSync(() => process.stdin),
  };
}

/**
 * The claude launcher (src/cli/daemon/client.ts) reads stdin before it knows whether the daemon
 * answers; when it falls back to deciding in this process it hands over what it read here.
 */
const HANDED_STDIN = '__hookledgerStdin';

function handedStdin(): Promise<string> | null {
  const handed = (globalThis as Record<string, unknown>)[HANDED_STDIN];
  return typeof handed === 'string' ? Promise.resolve(handed) : null;
}
