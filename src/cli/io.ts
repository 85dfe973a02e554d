import { readSync } from 'node:fs';
import { escapeControls } from '../reports/controls.js';

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

/** The most a command reads from stdin, bytes. */
const MAX_INPUT_BYTES = 16 * 1024 * 1024;

/** Reads all of stdin as UTF-8. */
export async function readAll(stream: NodeJS.ReadableStream, maxBytes = MAX_INPUT_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    size += buf.length;
    if (size > maxBytes) throw new Error(`input exceeds ${maxBytes} bytes`);
    chunks.push(buf);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Writes a text report followed by a newline, with the controls in it made visible (escapeControls). */
export function writeReport(io: CliIo, text: string): void {
  io.stdout.write(`${escapeControls(text, useColour(io))}\n`);
}

/** Writes a JSON document followed by a newline. */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Reads all of file descriptor 0 with blocking reads, without creating `process.stdin` (for a
 * pipe that is a net.Socket and the stream machinery: about 3 ms of a process that starts for
 * one event). A descriptor that would block (one left non-blocking by the parent) hands over to
 * `fallback` with what was read so far; a closed one reads as empty.
 */
export async function readStdinSync(fallback: () => NodeJS.ReadableStream, maxBytes = MAX_INPUT_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    let n: number;
    try {
      n = readSync(0, buffer, 0, buffer.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN') return Buffer.concat([...chunks, Buffer.from(await readAll(fallback(), maxBytes - size))]).toString('utf8');
      if (code === 'EOF' || code === 'EBADF') break;
      throw error;
    }
    if (n === 0) break;
    size += n;
    if (size > maxBytes) throw new Error(`input exceeds ${maxBytes} bytes`);
    chunks.push(buffer.subarray(0, n));
  }
  return Buffer.concat(chunks).toString('utf8');
}
