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

export type Paint = (style: 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan', text: string) => string;

const CODES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;

export function painter(enabled: boolean): Paint {
  if (!enabled) return (_style, text) => text;
  return (style, text) => `\u001b[${CODES[style][0]}m${text}\u001b[${CODES[style][1]}m`;
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

// Our painter's own SGR sequences: the only escape sequences a text report may carry.
const OWN_SGR = new Set(Object.values(CODES).flatMap(([on, off]) => [`\u001b[${on}m`, `\u001b[${off}m`]));

// An SGR-shaped sequence (kept only if it is one of ours), or one character a terminal would act on
// instead of print: C0 but '\n', DEL, C1, the Unicode line/paragraph separators, bidi controls.
// eslint-disable-next-line no-control-regex
const UNSAFE = /\u001b\[[0-9;]*m|[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * Makes report text safe for a terminal: prompts, tool inputs and hook messages come from agents
 * and hooks, and an escape sequence in them could move the cursor, erase or conceal lines of an
 * audit report, or reorder text (bidi). Every control but '\n' becomes visible (`\x1b`, `\u202e`);
 * only the painter's own colours survive, and none at all when colour is off.
 */
export function escapeControls(text: string, keepColour: boolean): string {
  return text.replace(UNSAFE, (match) => {
    if (match.length > 1) return keepColour && OWN_SGR.has(match) ? match : `${visible(match[0]!)}${match.slice(1)}`;
    return visible(match);
  });
}

/** Writes a text report followed by a newline, with the controls in it made visible (escapeControls). */
export function writeReport(io: CliIo, text: string): void {
  io.stdout.write(`${escapeControls(text, useColour(io))}\n`);
}

/** Writes a JSON document followed by a newline. */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
