import { InputError } from '../../domain/errors.js';
import { parseNamedTimeBound } from '../../domain/time.js';
import { floorHour } from '../../ledger/health-rollup.js';
import { DEFAULT_HEALTH_WINDOW_MS } from '../../ledger/queries/health.js';
import { seriesStep, type HealthPoint } from '../../ledger/queries/health-series.js';
import { healthFlags } from '../../reports/health-text.js';
import { count, duration, percent, utc } from '../format.js';
import { dataAttr, fold, html } from '../html.js';
import type { PageContext, PageResult } from '../page.js';

/** Points on the over-time charts. */
const BUCKETS = 30;
/** Hooks drawn on the latency chart (the slowest by p95). */
const LATENCY_LINES = 6;

/**
 * /hooks: per-hook runs, decisions, failure and timeout rates and p50/p95 for the window (the
 * table), and the same over time (charts: one series query for every bucket, percentiles from
 * the hourly rollup's histograms). Slow and failing hooks are flagged in words.
 */
export async function hooksPage(ctx: PageContext): Promise<PageResult> {
  const untilText = ctx.query.get('until')?.trim() || '';
  const sinceText = ctx.query.get('since')?.trim() || '';
  const until = untilText ? parseNamedTimeBound('until', untilText, ctx.now) : ctx.now;
  // The default window starts on the hour, so that the table and the charts cover the same hours,
  // all read from the hourly rollup (a partial first hour is aggregated live).
  const since = sinceText ? parseNamedTimeBound('since', sinceText, ctx.now) : floorHour(until - DEFAULT_HEALTH_WINDOW_MS);
  if (since >= until) throw new InputError(`since: ${sinceText} is not before until ${untilText || 'now'}: the window is empty`);
  const hookId = ctx.query.get('hook')?.trim() || undefined;
  const report = await ctx.ledger.hookHealth({ since, until, now: ctx.now, ...(hookId ? { hookId } : {}) });
  const slowest = hookId
    ? [hookId]
    : [...report.hooks]
        .sort((a, b) => (b.p95Us ?? 0) - (a.p95Us ?? 0))
        .slice(0, LATENCY_LINES)
        .map((h) => h.hookId);
  // Buckets are whole hours, read from the hourly rollup; one read answers every bucket, with
  // percentiles only for the hooks the latency chart draws.
  const series = await ctx.ledger.hookHealthSeries({
    since,
    until,
    stepMs: seriesStep(since, until, BUCKETS),
    now: ctx.now,
    percentilesOf: slowest,
    ...(hookId ? { hookId } : {}),
  });
  const buckets = series.buckets;
  const x = buckets.map((b) => Math.floor(b.start / 1000));
  const sum = (hooks: HealthPoint[], f: (h: HealthPoint) => number) => hooks.reduce((n, h) => n + f(h), 0);
  const volume = {
    kind: 'time',
    title: hookId ? `Runs, failures and timeouts of ${hookId}` : 'Runs, failures and timeouts (all hooks)',
    x,
    series: [
      { label: 'runs', values: buckets.map((b) => sum(b.hooks, (h) => h.runs)) },
      { label: 'denials', values: buckets.map((b) => sum(b.hooks, (h) => h.denials)) },
      { label: 'failures', values: buckets.map((b) => sum(b.hooks, (h) => h.failures)) },
      { label: 'timeouts', values: buckets.map((b) => sum(b.hooks, (h) => h.timeouts)) },
    ],
  };
  const rates = {
    kind: 'time',
    title: 'Failure and timeout rate (%)',
    x,
    series: [
      {
        label: 'failure rate %',
        values: buckets.map((b) =>
          ratio(
            sum(b.hooks, (h) => h.failures),
            sum(b.hooks, (h) => h.runs),
          ),
        ),
      },
      {
        label: 'timeout rate %',
        values: buckets.map((b) =>
          ratio(
            sum(b.hooks, (h) => h.timeouts),
            sum(b.hooks, (h) => h.runs),
          ),
        ),
      },
    ],
  };
  const latency = {
    kind: 'time',
    title: hookId ? `p50 and p95 of ${hookId} (ms)` : `p95 of the ${slowest.length} slowest hooks (ms)`,
    x,
    log: true,
    series: hookId
      ? [
          { label: 'p50 ms', values: buckets.map((b) => ms(b.hooks[0]?.p50Us)) },
          { label: 'p95 ms', values: buckets.map((b) => ms(b.hooks[0]?.p95Us)) },
        ]
      : slowest.map((id) => ({ label: id, values: buckets.map((b) => ms(b.hooks.find((h) => h.hookId === id)?.p95Us)) })),
  };
  const rows = report.hooks.map((h) => {
    const flags = healthFlags(h);
    return html`<tr${flags.length > 0 ? html` class="flagged"` : ''}>
<td><a href="/hooks?hook=${encodeURIComponent(h.hookId)}${sinceText ? `&since=${encodeURIComponent(sinceText)}` : ''}${untilText ? `&until=${encodeURIComponent(untilText)}` : ''}">${fold(h.hookId, 60)}</a></td>
<td class="num">${count(h.runs)}</td><td class="num">${count(h.allows)}</td><td class="num">${count(h.denials)}</td><td class="num">${count(h.asks)}</td>
<td class="num">${count(h.modifies)}</td><td class="num">${count(h.decisive)}</td><td class="num">${count(h.skips)}</td>
<td class="num${h.failures > 0 ? ' hot' : ''}">${count(h.failures)}</td><td class="num${h.timeouts > 0 ? ' hot' : ''}">${count(h.timeouts)}</td>
<td class="num">${percent(h.failureRate)}</td><td class="num">${duration(h.p50Us)}</td><td class="num">${duration(h.p95Us)}</td><td class="num">${duration(h.maxUs)}</td>
<td>${flags.length > 0 ? html`<strong class="flag">${flags.join(', ')}</strong>` : ''}</td></tr>`;
  });
  return {
    title: 'Hook health',
    section: 'hooks',
    body: html`<h1>Hook health${hookId ? html`: ${fold(hookId, 80)}` : ''}</h1>
<form class="filters" method="get" action="/hooks" role="search">
<div class="field"><label for="f-hook">Hook</label><input id="f-hook" name="hook" value="${hookId ?? ''}"></div>
<div class="field"><label for="f-since">Since</label><input id="f-since" name="since" value="${sinceText}" placeholder="30d"></div>
<div class="field"><label for="f-until">Until</label><input id="f-until" name="until" value="${untilText}" placeholder="now"></div>
<div class="actions"><button type="submit">Apply</button> <a href="/hooks">Clear</a></div></form>
<p>${utc(report.since)} to ${utc(report.until)}. Flagged: p95 ≥ 500 ms (slow), failures + timeouts ≥ 1% of runs (failing).</p>
<div class="charts">
<div class="chart" data-chart="${dataAttr(volume)}" role="img" aria-label="${volume.title}"></div>
<div class="chart" data-chart="${dataAttr(rates)}" role="img" aria-label="${rates.title}"></div>
<div class="chart" data-chart="${dataAttr(latency)}" role="img" aria-label="${latency.title}"></div>
</div>
<div class="scroll"><table>
<caption>Worst first: by failure rate, then p95</caption>
<thead><tr><th scope="col">Hook</th><th scope="col" class="num">Runs</th><th scope="col" class="num">Allow</th><th scope="col" class="num">Deny</th>
<th scope="col" class="num">Ask</th><th scope="col" class="num">Modify</th><th scope="col" class="num">Decisive</th><th scope="col" class="num">Skipped</th>
<th scope="col" class="num">Failed</th><th scope="col" class="num">Timed out</th><th scope="col" class="num">Fail rate</th>
<th scope="col" class="num">p50</th><th scope="col" class="num">p95</th><th scope="col" class="num">Max</th><th scope="col">Flags</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="15" class="empty">No hook ran in this window.</td></tr>`}</tbody>
</table></div>`,
  };
}

function ratio(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 100;
}

function ms(us: number | null | undefined): number | null {
  return us === null || us === undefined ? null : us / 1000;
}
