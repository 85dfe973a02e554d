/** Formatting shared by the text reports. */
import { escapeControls } from './controls.js';
import { oneLine } from '../domain/text.js';
import { SGR_SEQUENCE } from './paint.js';

/** µs → a short human duration: 850µs, 12.3ms, 4.20s. */
export function formatDuration(us: number | null): string {
  if (us === null) return '-';
  if (us < 1000) return `${us}µs`;
  if (us < 1_000_000) return `${(us / 1000).toFixed(us < 10_000 ? 2 : 1)}ms`;
  return `${(us / 1_000_000).toFixed(2)}s`;
}

/** ms since the epoch → ISO-8601 without milliseconds noise. */
export function formatTime(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString().replace('.000Z', 'Z');
}

// A message from an agent or a hook must not start a line of its own and forge a line of a report.
export { oneLine } from '../domain/text.js';

/**
 * One line of at most `max` characters from any JSON value, its controls already made visible
 * (as `writeReport` would) so that the cut is measured on what the terminal shows.
 */
export function summarise(value: unknown, max = 100): string {
  if (value === null || value === undefined) return '-';
  const text = escapeControls(oneLine(typeof value === 'string' ? value : JSON.stringify(value)), false);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Options of `table`. */
export interface TableOptions {
  /** Columns never cut (e.g. an id a reader copies into the next command). */
  keep?: readonly number[];
}

/** No column is cut below this (or below its own width, when narrower). */
const MIN_COLUMN = 8;
/** The last column, usually free text, keeps at least this much. */
const MIN_LAST_COLUMN = 10;

/**
 * Aligns rows into columns. Widths come from the content; when a line would not fit `width`
 * (80 by default: reports must read in a plain terminal), the widest columns are cut with …,
 * one character at a time, down to a minimum, so that a long tool name or hook id narrows its
 * own column instead of pushing the line past the width. Cells are folded onto one line and
 * their control characters made visible (`escapeControls`).
 */
export function table(header: string[], rows: string[][], width = 80, options: TableOptions = {}): string {
  // Controls are made visible before measuring, or an escape sequence from data would count as
  // zero width (or be cut in half); the painter's colours pass and count as zero.
  const all = [header, ...rows].map((row) => row.map((cell) => escapeControls(oneLine(cell), true)));
  const widths = header.map((_, c) => Math.max(...all.map((r) => visibleLength(r[c] ?? ''))));
  const last = widths.length - 1;
  const floor = widths.map((w, c) => (options.keep?.includes(c) ? w : Math.min(w, c === last ? MIN_LAST_COLUMN : MIN_COLUMN)));
  let excess = widths.reduce((a, w) => a + w, 0) + 2 * last - width;
  while (excess > 0) {
    let widest = -1;
    for (let c = 0; c <= last; c++) if (widths[c]! > floor[c]! && (widest < 0 || widths[c]! > widths[widest]!)) widest = c;
    if (widest < 0) break;
    widths[widest]! -= 1;
    excess -= 1;
  }
  return all
    .map((row) =>
      row
        .map((cell, c) => {
          const fitted = visibleLength(cell) > widths[c]! ? cut(cell, widths[c]!) : cell;
          return c === row.length - 1 ? fitted : fitted + ' '.repeat(Math.max(0, widths[c]! - visibleLength(fitted)));
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/**
 * The first `max` visible characters of `text`, the last one replaced by …; colour codes after
 * the cut are kept so that a cut painted cell still switches its colour off.
 */
function cut(text: string, max: number): string {
  let out = '';
  let shown = 0;
  for (const part of text.split(SGR_SPLIT)) {
    if (part.startsWith('\u001b[')) out += part;
    else if (shown < max - 1) {
      const chars = [...part].slice(0, max - 1 - shown);
      out += chars.join('');
      shown += chars.length;
    }
  }
  return out.replace(TRAILING_SGR, '…$1');
}

const SGR_SPLIT = new RegExp(`(${SGR_SEQUENCE.source})`);
const TRAILING_SGR = new RegExp(`((?:${SGR_SEQUENCE.source})*)$`);
const ANSI = new RegExp(SGR_SEQUENCE.source, 'g');
function visibleLength(text: string): number {
  return [...text.replace(ANSI, '')].length;
}
