/** Colours for text reports: the only escape sequences a report may carry. */

export type Paint = (style: 'bold' | 'dim' | 'red' | 'green' | 'yellow' | 'cyan', text: string) => string;

/** SGR on/off codes per style. */
export const SGR_CODES = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;

/** One SGR (colour) sequence; what a report's width and cuts must not count as characters. */
// eslint-disable-next-line no-control-regex -- matching the terminal's escape character is the point
export const SGR_SEQUENCE = /\u001b\[[0-9;]*m/;

/** Paints text in one of our styles, or passes it through when colour is off. */
export function painter(enabled: boolean): Paint {
  if (!enabled) return (_style, text) => text;
  return (style, text) => `\u001b[${SGR_CODES[style][0]}m${text}\u001b[${SGR_CODES[style][1]}m`;
}
