import { InputError } from '../../domain/errors.js';
import { DENIAL_GROUPS, type DenialGroupBy } from '../../ledger/queries/denials.js';
import { count, utc } from '../format.js';
import { FILTER_PARAMS, filterFromQuery, filterParams, type FilterParam } from '../filters.js';
import { dataAttr, fold, html } from '../html.js';
import type { PageContext, PageResult } from '../page.js';
import { downloads, filterForm, invocationLink, pager, sessionLink } from './components.js';
import { inputText } from './sessions.js';

/** Every filter `hookledger denials` has (the decision is always deny). */
const FILTERS: readonly FilterParam[] = FILTER_PARAMS.filter((name) => name !== 'decision');
const PAGE = 50;
const GROUPS_SHOWN = 30;
/** The chart's window when the filter has no time bound. */
export const CHART_DEFAULT_DAYS = 7;

/** /denials: denied invocations newest first (keyset paging), and the counts per hook, tool, reason, session or day as a chart. */
export async function denialsPage(ctx: PageContext): Promise<PageResult> {
  const filter = filterFromQuery(ctx.query, FILTERS, ctx.now);
  const groupBy = (ctx.query.get('group-by') || 'hook') as DenialGroupBy;
  if (!(DENIAL_GROUPS as readonly string[]).includes(groupBy)) {
    throw new InputError(`group-by: "${groupBy}" is not a grouping (expected one of ${DENIAL_GROUPS.join(', ')})`);
  }
  const cursor = ctx.query.get('cursor');
  // Counting every denial of a large ledger costs a scan of all of them: without a time filter the
  // chart covers the last CHART_DEFAULT_DAYS days (the list below is not limited).
  const chartFilter =
    filter.since === undefined && filter.until === undefined ? { ...filter, since: ctx.now - CHART_DEFAULT_DAYS * 86_400_000 } : filter;
  const [page, groups] = await Promise.all([
    ctx.ledger.listDenials(filter, { limit: PAGE, cursor: cursor || null }),
    ctx.ledger.groupDenials(chartFilter, groupBy, { limit: GROUPS_SHOWN }),
  ]);
  const chartPeriod = chartFilter === filter ? '' : ` in the last ${CHART_DEFAULT_DAYS} days`;
  const params = filterParams(ctx.query, FILTERS);
  const groupSelect = html`<div class="field"><label for="f-group-by">Count by</label><select id="f-group-by" name="group-by">${DENIAL_GROUPS.map(
    (g) => html`<option${g === groupBy ? html` selected` : ''}>${g}</option>`,
  )}</select></div>`;
  const chart = {
    kind: 'bars',
    title: `Denials by ${groupBy}${chartPeriod}`,
    labels: groups.groups.map((g) => g.key ?? '(none)'),
    series: [{ label: 'denials', values: groups.groups.map((g) => g.count) }],
  };
  const groupParam = groupBy === 'day' ? null : groupBy === 'reason' ? 'reason-code' : groupBy;
  const rows = page.rows.map(
    (d) => html`<tr>
<td>${invocationLink(d.invocationId)}</td><td>${utc(d.startedAt)}</td><td>${sessionLink(d.sessionId, d.sessionId ? d.sessionId.slice(0, 8) : undefined)}</td>
<td>${d.toolName ?? html`<span class="none">${d.point}</span>`}</td><td>${fold(d.decisiveHookId, 60)}</td><td>${d.reasonCode ? html`<code>${d.reasonCode}</code>` : ''}</td>
<td class="wide">${fold(d.message, 160)}</td><td class="wide">${fold(inputText(d.input), 120)}</td></tr>`,
  );
  return {
    title: 'Denials',
    section: 'denials',
    body: html`<h1>Denials</h1>
${filterForm('/denials', FILTERS, ctx.query, groupSelect)}
<section aria-labelledby="groups-h"><h2 id="groups-h">${count(groups.total)} denials${chartPeriod} by ${groupBy}${
      groups.totalGroups > groups.groups.length
        ? html` (the ${groups.groups.length} ${groupBy === 'day' ? 'latest' : 'largest'} of ${count(groups.totalGroups)})`
        : ''
    }</h2>
<div class="chart" data-chart="${dataAttr(chart)}" role="img" aria-label="Bar chart of denials by ${groupBy}"></div>
<div class="scroll"><table class="groups"><thead><tr><th scope="col">${groupBy}</th><th scope="col" class="num">Denials</th><th scope="col">First</th><th scope="col">Last</th></tr></thead>
<tbody>${groups.groups.map(
      (g) =>
        html`<tr><td>${
          g.key !== null && groupParam !== null
            ? html`<a href="/denials?${new URLSearchParams({ ...params, [groupParam]: g.key }).toString()}">${fold(g.key, 80)}</a>`
            : fold(g.key ?? '(none)', 80)
        }</td><td class="num">${count(g.count)}</td><td>${utc(g.firstAt)}</td><td>${utc(g.lastAt)}</td></tr>`,
    )}</tbody></table></div>
</section>
<section aria-labelledby="list-h"><h2 id="list-h">Newest first${cursor ? ' (continued)' : ''}</h2>
<div class="scroll"><table class="denials">
<thead><tr><th scope="col">Invocation</th><th scope="col">When</th><th scope="col">Session</th><th scope="col">Tool</th><th scope="col">Decisive hook</th>
<th scope="col">Reason</th><th scope="col">Message</th><th scope="col">Input</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="8" class="empty">No denials match.</td></tr>`}</tbody>
</table></div>
${pager('/denials', { ...params, 'group-by': groupBy }, page.nextCursor, !cursor)}
</section>
${downloads({ ...params, decision: 'deny' })}`,
  };
}
