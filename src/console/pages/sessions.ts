import { count, duration, utc } from '../format.js';
import { filterForm, decisionBadge, downloads, facts, invocationLink, pager, sessionLink } from './components.js';
import { filterFromQuery, filterParams, type FilterParam } from '../filters.js';
import { fold, html } from '../html.js';
import type { PageContext, PageResult } from '../page.js';

const LIST_FILTERS: readonly FilterParam[] = ['since', 'until', 'decision', 'agent', 'host', 'source', 'tool', 'point', 'hook-set'];
const TIMELINE_FILTERS: readonly FilterParam[] = ['since', 'until', 'decision', 'agent', 'tool', 'point'];
const PAGE = 50;
const TIMELINE_PAGE = 200;

/** /sessions: the most recently active sessions, filtered, keyset-paged. */
export async function sessionsPage(ctx: PageContext): Promise<PageResult> {
  const filter = filterFromQuery(ctx.query, LIST_FILTERS, ctx.now);
  const cursor = ctx.query.get('cursor');
  const page = await ctx.ledger.listSessions(filter, { limit: PAGE, cursor: cursor || null });
  const params = filterParams(ctx.query, LIST_FILTERS);
  const rows = page.rows.map(
    (s) => html`<tr>
<td>${sessionLink(s.sessionId)}</td><td>${utc(s.firstSeen)}</td><td>${utc(s.lastSeen)}</td>
<td class="num">${count(s.invocations)}</td><td class="num${s.denials > 0 ? ' hot' : ''}">${count(s.denials)}</td>
<td class="num">${count(s.asks)}</td><td class="num">${count(s.modified)}</td>
<td class="num${s.failures > 0 ? ' hot' : ''}">${count(s.failures)}</td><td class="num${s.timeouts > 0 ? ' hot' : ''}">${count(s.timeouts)}</td>
</tr>`,
  );
  return {
    title: 'Sessions',
    section: 'sessions',
    body: html`<h1>Sessions</h1>
${filterForm('/sessions', LIST_FILTERS, ctx.query)}
<div class="scroll"><table>
<caption>Most recently active first${cursor ? ' (continued)' : ''}</caption>
<thead><tr><th scope="col">Session</th><th scope="col">First event</th><th scope="col">Last event</th><th scope="col" class="num">Events</th>
<th scope="col" class="num">Denied</th><th scope="col" class="num">Asked</th><th scope="col" class="num">Modified</th>
<th scope="col" class="num">Hook failures</th><th scope="col" class="num">Timeouts</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="9" class="empty">No sessions match.</td></tr>`}</tbody>
</table></div>
${pager('/sessions', params, page.nextCursor, !cursor)}
${downloads(params)}`,
  };
}

/** /sessions/<id>: the session's timeline: every event, its decision, modified inputs, the hooks that ran. */
export async function sessionPage(ctx: PageContext, sessionId: string): Promise<PageResult> {
  const filter = filterFromQuery(ctx.query, TIMELINE_FILTERS, ctx.now);
  const cursor = ctx.query.get('cursor');
  const t = await ctx.ledger.sessionTimeline(sessionId, { limit: TIMELINE_PAGE, cursor: cursor || null }, filter);
  const s = t.session;
  const params = filterParams(ctx.query, TIMELINE_FILTERS);
  const events = t.events.map(
    (e) => html`<li id="inv-${e.invocationId}" class="event${e.decision === 'deny' ? ' denied' : ''}${e.modified ? ' modified' : ''}">
<div class="event-head">${invocationLink(e.invocationId)} <time>${utc(e.startedAt)}</time>
<span class="point">${e.eventName ?? e.point}</span>${e.toolName ? html` <strong>${e.toolName}</strong>` : ''}
${e.turn !== null ? html`<span class="turn">turn ${e.turn}</span>` : ''} ${decisionBadge(e.decision)}
${e.decisiveHookId ? html`<span>by <a href="/denials?hook=${encodeURIComponent(e.decisiveHookId)}">${e.decisiveHookId}</a></span>` : ''}
${e.reasonCode ? html`<code>${e.reasonCode}</code>` : ''}
<span class="hooks">${count(e.hooks)} hook${e.hooks === 1 ? '' : 's'}${e.failures > 0 ? html`, <span class="hot">${e.failures} failed</span>` : ''}${
      e.timeouts > 0 ? html`, <span class="hot">${e.timeouts} timed out</span>` : ''
    } · ${duration(e.durationUs)}</span></div>
${e.message ? html`<div class="message">${fold(e.message)}</div>` : ''}
<div class="input"><span class="label">input</span> ${fold(inputText(e.input))}</div>
${e.modified ? html`<div class="input"><span class="label">modified${e.modifiedBy.length > 0 ? html` by ${e.modifiedBy.join(', ')}` : ''}</span> ${fold(inputText(e.modifiedInput))}</div>` : ''}
</li>`,
  );
  return {
    title: `Session ${sessionId}`,
    section: 'sessions',
    body: html`<h1>Session <span class="id">${fold(sessionId, 80)}</span></h1>
${facts([
  ['First event', utc(s.firstSeen)],
  ['Last event', utc(s.lastSeen)],
  ['Events', count(s.invocations)],
  ['Denied', count(s.denials)],
  ['Asked', count(s.asks)],
  ['Modified', count(s.modified)],
  ['Hook failures', count(s.failures)],
  ['Timeouts', count(s.timeouts)],
])}
${filterForm(`/sessions/${encodeURIComponent(sessionId)}`, TIMELINE_FILTERS, ctx.query)}
<ol class="timeline">${events.length > 0 ? events : html`<li class="empty">No events match.</li>`}</ol>
${pager(`/sessions/${encodeURIComponent(sessionId)}`, params, t.nextCursor, !cursor)}
${downloads({ ...params, session: sessionId })}`,
  };
}

/** An input on one line for a summary (the explain page shows it whole). */
export function inputText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
}
