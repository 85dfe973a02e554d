/**
 * Folds every run of whitespace (newlines, CR, tabs, U+2028...) into one space and trims: text
 * from an agent, a hook or an exception that goes into a one-line message, an error line or a
 * report cell must not start a line of its own.
 */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
