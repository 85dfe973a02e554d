/**
 * HTML output for the console and the audit report. Everything shown there may come from an
 * agent or a hook (prompts, tool inputs, messages, ids) and is hostile: it is escaped for
 * both text and attribute context, control and bidirectional-override characters are made
 * visible instead of being obeyed, and long values are folded. The `html` tag escapes every
 * interpolated value unless it is already `SafeHtml`, so markup can only come from our templates.
 */

/** Markup built by our templates (never from data). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

/** Values a template accepts: text (escaped), numbers, markup, lists of those; null/undefined/false render nothing. */
export type HtmlValue = SafeHtml | string | number | boolean | null | undefined | readonly HtmlValue[];

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * C0/C1 controls (but tab and newline), zero-width and bidirectional formatting characters,
 * line/paragraph separators and the BOM: a right-to-left override in a file name can make
 * `exe.txt` read as `txt.exe`, so these are shown as their code point, never applied.
 */
// eslint-disable-next-line no-control-regex -- these are the characters the page must show, not apply
const INVISIBLE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF\uFFF9-\uFFFB]/g;

/** Escapes text for HTML text and (quoted) attribute context, with invisible characters made visible. */
export function escapeHtml(text: string): string {
  return text
    .replace(/[&<>"']/g, (c) => ENTITIES[c]!)
    .replace(INVISIBLE, (c) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`);
}

function render(value: HtmlValue): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return (value as readonly HtmlValue[]).map(render).join('');
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<td>${text}</td>\`` escapes `text`; nested `html` results are kept as markup. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let k = 0; k < values.length; k++) out += render(values[k]!) + strings[k + 1]!;
  return new SafeHtml(out);
}

/** Joins rendered values (e.g. rows built with `map`). */
export function join(values: readonly HtmlValue[]): SafeHtml {
  return new SafeHtml(values.map(render).join(''));
}

/** Characters shown in a table cell or summary before a value is folded. */
export const INLINE_MAX = 240;
/** Characters shown when a folded value is opened; the rest is in the CSV/JSONL download. */
export const FOLDED_MAX = 20_000;

/**
 * A value that may be long: up to `inline` characters as they are, else its beginning with
 * the rest behind a `<details>` (up to FOLDED_MAX characters, then a note), so a megabyte
 * prompt neither stretches the page nor slows the browser.
 */
export function fold(text: string | null | undefined, inline = INLINE_MAX, block = false): SafeHtml {
  if (text === null || text === undefined) return html`<span class="none">—</span>`;
  const tag = block ? 'pre' : 'span';
  if (text.length <= inline) return new SafeHtml(`<${tag} class="value">${escapeHtml(text)}</${tag}>`);
  const shown = text.slice(0, FOLDED_MAX);
  const rest = text.length - shown.length;
  return html`<details class="fold"><summary><span class="value">${text.slice(0, inline)}</span>… <span class="more">(${text.length.toLocaleString('en-US')} characters)</span></summary>${new SafeHtml(`<${tag === 'pre' ? 'pre' : 'div'} class="value folded">${escapeHtml(shown)}</${tag === 'pre' ? 'pre' : 'div'}>`)}${rest > 0 ? html`<p class="note">${rest.toLocaleString('en-US')} more characters not shown: download the record as JSON Lines for all of it.</p>` : ''}</details>`;
}

/** A JSON value, pretty-printed and folded. */
export function jsonBlock(value: unknown, inline = 2000): SafeHtml {
  if (value === null || value === undefined) return html`<span class="none">—</span>`;
  const text = typeof value === 'string' ? value : (JSON.stringify(value, null, 2) ?? String(value));
  return fold(text, inline, true);
}

/** Text for a query string value or a path segment we build ourselves (links never carry agent-supplied schemes). */
export function pathSegment(text: string | number): string {
  return encodeURIComponent(String(text));
}

/** `?a=1&b=2` from defined values, or '' when there are none. */
export function queryString(params: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const text = q.toString();
  return text === '' ? '' : `?${text}`;
}

/**
 * JSON for a `data-` attribute read by the console's script (charts): escaped like any
 * attribute, so nothing in it can end the attribute or the element.
 */
export function dataAttr(value: unknown): SafeHtml {
  return new SafeHtml(escapeHtml(JSON.stringify(value)));
}
