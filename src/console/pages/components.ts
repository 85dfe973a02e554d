import { DECISIONS, REASON_CODES } from '../../domain/results.js';
import { POINTS } from '../../domain/points.js';
import { html, join, pathSegment, queryString, type SafeHtml } from '../html.js';
import type { FilterParam } from '../filters.js';

const LABELS: Record<FilterParam, string> = {
  session: 'Session',
  tool: 'Tool',
  hook: 'Decisive hook',
  'reason-code': 'Reason code',
  point: 'Point',
  'hook-set': 'Hook set',
  decision: 'Decision',
  agent: 'Agent',
  host: 'Host',
  source: 'Source',
  since: 'Since',
  until: 'Until',
};

const CHOICES: Partial<Record<FilterParam, readonly string[]>> = {
  'reason-code': REASON_CODES,
  point: POINTS,
  decision: DECISIONS,
};

/** A GET form over the given filter parameters, pre-filled from the query; `extra` adds fields (e.g. group-by). */
export function filterForm(action: string, fields: readonly FilterParam[], query: URLSearchParams, extra: SafeHtml | '' = ''): SafeHtml {
  return html`<form class="filters" method="get" action="${action}" role="search">
${fields.map((name) => {
  const id = `f-${name}`;
  const current = query.get(name) ?? '';
  const choices = CHOICES[name];
  const input = choices
    ? html`<select id="${id}" name="${name}"><option value="">any</option>${choices.map(
        (c) => html`<option${c === current ? html` selected` : ''}>${c}</option>`,
      )}</select>`
    : html`<input id="${id}" name="${name}" value="${current}"${
        name === 'since' || name === 'until' ? html` placeholder="7d, 2026-11-01"` : ''
      }>`;
  return html`<div class="field"><label for="${id}">${LABELS[name]}</label>${input}</div>`;
})}
${extra}
<div class="actions"><button type="submit">Apply</button> <a href="${action}">Clear</a></div>
</form>`;
}

/** A decision as a coloured badge (text, not colour alone, carries the meaning). */
export function decisionBadge(decision: string | null): SafeHtml {
  if (decision === null) return html`<span class="badge none">—</span>`;
  return html`<span class="badge d-${/^[a-z]+$/.test(decision) ? decision : 'other'}">${decision}</span>`;
}

/** Links to the invocation, session and so on that a row refers to. */
export function invocationLink(id: number, label: string | number = `#${id}`): SafeHtml {
  return html`<a href="/invocations/${pathSegment(id)}">${label}</a>`;
}

export function sessionLink(sessionId: string | null, label?: SafeHtml | string): SafeHtml {
  if (sessionId === null) return html`<span class="none">—</span>`;
  return html`<a class="id" href="/sessions/${pathSegment(sessionId)}">${label ?? sessionId}</a>`;
}

/** "Next page" with the cursor, keeping the other parameters. */
export function pager(path: string, params: Record<string, string>, nextCursor: string | null, firstPage: boolean): SafeHtml {
  const links: SafeHtml[] = [];
  if (!firstPage) links.push(html`<a href="${path}${queryString(params)}">First page</a>`);
  if (nextCursor !== null) links.push(html`<a rel="next" href="${path}${queryString({ ...params, cursor: nextCursor })}">Next page →</a>`);
  return links.length === 0 ? html`` : html`<nav class="pager" aria-label="Pages">${join(links)}</nav>`;
}

/** CSV and JSON Lines links to /export with the filter of the page (the records `hookledger export` writes). */
export function downloads(params: Record<string, string>): SafeHtml {
  return html`<p class="downloads">Download these invocations:
<a href="/export.csv${queryString(params)}" download>CSV</a> ·
<a href="/export.jsonl${queryString(params)}" download>JSON Lines</a></p>`;
}

/** A key/value list. */
export function facts(rows: [string, SafeHtml | string | number | null][]): SafeHtml {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v ?? html`<span class="none">—</span>`}</dd>`)}</dl>`;
}
