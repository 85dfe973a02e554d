import { readSync } from 'node:fs';

/*
 * Reading a command's stdin, with Node built-ins only: the claude launcher
 * (src/cli/daemon/client.ts) reads the event with these before it loads anything else.
 */

/** The most a command reads from stdin, bytes. */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

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
