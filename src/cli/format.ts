/** Formatting shared by the text reports. */

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

/** One line of at most `max` characters from any JSON value. */
export function summarise(value: unknown, max = 100): string {
  if (value === null || value === undefined) return '-';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const oneLine = text.replace(/\s+/g, ' ');
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

/**
 * Aligns rows into columns. Widths come from the content but the last column is cut so that
 * a line fits `width` (80 by default: reports must read in a plain terminal).
 */
export function table(header: string[], rows: string[][], width = 80): string {
  const all = [header, ...rows];
  const widths = header.map((_, c) => Math.max(...all.map((r) => visibleLength(r[c] ?? ''))));
  const fixed = widths.slice(0, -1).reduce((a, w) => a + w + 2, 0);
  const lastWidth = Math.max(10, width - fixed);
  return all
    .map((row) =>
      row
        .map((cell, c) => {
          if (c === row.length - 1) return visibleLength(cell) > lastWidth ? `${cell.slice(0, lastWidth - 1)}…` : cell;
          return cell + ' '.repeat(Math.max(0, widths[c]! - visibleLength(cell)));
        })
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;
function visibleLength(text: string): number {
  return text.replace(ANSI, '').length;
}
