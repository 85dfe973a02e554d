import { escapeControls } from '../reports/controls.js';

/** Where a command reads and writes; tests and the server pass their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

/** Colour only on a TTY and never with NO_COLOR (https://no-color.org). */
export function useColour(io: CliIo): boolean {
  return Boolean(io.stdout.isTTY) && io.env.NO_COLOR === undefined && io.env.TERM !== 'dumb';
}

/** Reads all of stdin as UTF-8. */
export async function readAll(stream: NodeJS.ReadableStream, maxBytes = 16 * 1024 * 1024): Promise<string> {
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
