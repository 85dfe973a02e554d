import { escapeControls } from '../reports/controls.js';

export { readAll, readStdinSync } from './stdin.js';

/** Where a command reads and writes; tests and the server pass their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
  /** All of stdin as UTF-8, where the caller has a faster way than reading `stdin` as a stream (hook-bin.ts). */
  readStdin?: () => Promise<string>;
  /**
   * Called by an agent command hook once its answer (stdout, and stderr where it has one) is
   * written, with the exit code it will return: the claude daemon replies to its client then,
   * while background hooks go on (src/cli/daemon/server.ts).
   */
  answered?: (exitCode: number) => void;
}

/** Colour only on a TTY and never with NO_COLOR (https://no-color.org). */
export function useColour(io: CliIo): boolean {
  return Boolean(io.stdout.isTTY) && io.env.NO_COLOR === undefined && io.env.TERM !== 'dumb';
}

/** Writes a text report followed by a newline, with the controls in it made visible (escapeControls). */
export function writeReport(io: CliIo, text: string): void {
  io.stdout.write(`${escapeControls(text, useColour(io))}\n`);
}

/** Writes a JSON document followed by a newline. */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
