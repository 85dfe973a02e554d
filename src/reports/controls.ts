import { SGR_CODES } from './paint.js';

// Our painter's own SGR sequences: the only escape sequences a text report may carry.
const OWN_SGR = new Set(Object.values(SGR_CODES).flatMap(([on, off]) => [`\u001b[${on}m`, `\u001b[${off}m`]));

// An SGR-shaped sequence (kept only if it is one of ours), or one character a terminal would act on
// instead of print: C0 but '\n', DEL, C1, the Unicode line/paragraph separators, bidi controls.
// eslint-disable-next-line no-control-regex -- these are the characters a report must not pass to a terminal
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
