import { InputError } from '../../domain/errors.js';
import type { HookChange, HookState, ReplayResult } from '../../domain/replay.js';
import { describeDecision } from '../../reports/replay-text.js';
import { count, utc } from '../format.js';
import { dataAttr, fold, html, type SafeHtml } from '../html.js';
import type { PageContext, PageResult } from '../page.js';
import { decisionBadge, facts, invocationLink, sessionLink } from './components.js';

const RUNS_SHOWN = 100;
const CHANGES_SHOWN = 500;

/** /replays: past replay runs, most recent first, with their totals. */
export async function replaysPage(ctx: PageContext): Promise<PageResult> {
  const runs = await ctx.ledger.listReplayRuns({ limit: RUNS_SHOWN });
  const rows = runs.map((r) => {
    const changed = r.totals.replayed - r.totals.unchanged;
    return html`<tr><td><a href="/replays/${r.id}">Run ${r.id}</a></td><td>${r.status}</td><td>${utc(r.startedAt)}</td>
<td>${r.hookSet.name}@${r.hookSet.version}${r.baseline ? html` <span class="none">(baseline ${r.baseline.name}@${r.baseline.version})</span>` : ''}</td>
<td class="num">${count(r.totals.replayed)} / ${count(r.totals.selected)}</td><td class="num${changed > 0 ? ' hot' : ''}">${count(changed)}</td>
<td class="num">${count(r.totals.newlyDenied)}</td><td class="num">${count(r.totals.newlyAllowed)}</td><td class="num">${count(r.totals.failed)}</td></tr>`;
  });
  return {
    title: 'Replays',
    section: 'replays',
    body: html`<h1>Replay runs</h1>
<p>Stored invocations replayed against another hook set (<code>hookledger replay --config NEW_HOOKS</code>): what would change.</p>
<div class="scroll"><table><thead><tr><th scope="col">Run</th><th scope="col">Status</th><th scope="col">Started</th><th scope="col">Hook set</th>
<th scope="col" class="num">Replayed</th><th scope="col" class="num">Changed</th><th scope="col" class="num">Newly denied</th>
<th scope="col" class="num">Newly allowed</th><th scope="col" class="num">Failed</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="9" class="empty">No replay runs yet.</td></tr>`}</tbody></table></div>`,
  };
}

/** /replays/<id>: a run's totals and, per changed invocation, the decision before and after and every hook that changed. */
export async function replayPage(ctx: PageContext, idText: string): Promise<PageResult> {
  if (!/^\d{1,15}$/.test(idText)) throw new InputError(`replay run: "${idText}" is not a run number`);
  const id = Number(idText);
  await ctx.ledger.getReplayRun(id);
  const d = await ctx.ledger.showReplayRun(id, { limit: CHANGES_SHOWN });
  const r = d.run;
  const t = r.totals;
  const kinds: [string, number][] = [
    ['newly denied', t.newlyDenied],
    ['newly allowed', t.newlyAllowed],
    ['now asks', t.nowAsks],
    ['other hook', t.otherHook],
    ['other reason', t.otherReason],
    ['modified differently', t.modifiedDifferently],
    ['failed', t.failed],
  ];
  const chart = {
    kind: 'bars',
    title: 'Changes by kind',
    labels: kinds.map(([k]) => k),
    series: [{ label: 'invocations', values: kinds.map(([, n]) => n) }],
  };
  return {
    title: `Replay run ${r.id}`,
    section: 'replays',
    body: html`<h1>Replay run ${r.id}</h1>
${facts([
  ['Status', r.status],
  ['Hook set', `${r.hookSet.name}@${r.hookSet.version} (${r.hookSet.fingerprint.slice(0, 12)})`],
  ['Baseline', r.baseline ? `${r.baseline.name}@${r.baseline.version} (${r.baseline.fingerprint.slice(0, 12)})` : 'the recorded decisions'],
  ['Started', utc(r.startedAt)],
  ['Finished', utc(r.finishedAt)],
  ['Replayed', `${count(t.replayed)} of ${count(t.selected)} selected`],
  ['Unchanged', count(t.unchanged)],
  ['Changed', count(d.changedTotal)],
  ['Baseline mismatches', count(d.baselineMismatchTotal)],
  ['Redacted inputs', count(t.redacted)],
])}
<div class="chart" data-chart="${dataAttr(chart)}" role="img" aria-label="Bar chart of changes by kind"></div>
<section aria-labelledby="changes-h"><h2 id="changes-h">Changed invocations (${count(d.changedTotal)}${d.changedTotal > d.changes.length ? `, first ${d.changes.length} shown` : ''})</h2>
${d.changes.length > 0 ? html`<ol class="changes">${d.changes.map(change)}</ol>` : html`<p class="empty">No decision changed.</p>`}
</section>
${
  d.baselineMismatches.length > 0
    ? html`<section><h2>Baseline mismatches (${count(d.baselineMismatchTotal)})</h2><ol class="changes">${d.baselineMismatches.map(
        (c) =>
          html`<li>${subject(c)}${c.recorded ? html`<div>recorded: ${fold(describeDecision(c.recorded), 300)}</div>` : ''}${
            c.old ? html`<div>baseline: ${fold(describeDecision(c.old), 300)}</div>` : ''
          }${hookChanges(c.baselineHookChanges ?? [])}</li>`,
      )}</ol></section>`
    : ''
}`,
  };
}

function subject(c: ReplayResult): SafeHtml {
  return html`<div class="event-head">${invocationLink(c.invocationId)} ${sessionLink(c.sessionId ?? null, c.sessionId ? c.sessionId.slice(0, 8) : undefined)}
<strong>${c.toolName ?? c.point ?? ''}</strong> ${fold(c.input ?? '', 120)}</div>`;
}

function change(c: ReplayResult): SafeHtml {
  return html`<li class="change">${subject(c)}
<div><span class="badge change-kind">${c.change.replace(/_/g, ' ')}</span></div>
<table class="was-now"><tbody>
${c.old ? html`<tr><th scope="row">was</th><td>${decisionBadge(c.old.decision)} ${fold(describeDecision(c.old), 300)}</td></tr>` : ''}
${c.new ? html`<tr><th scope="row">now</th><td>${decisionBadge(c.new.decision)} ${fold(describeDecision(c.new), 300)}</td></tr>` : ''}
${c.error ? html`<tr><th scope="row">error</th><td class="hot">${fold(c.error, 300)}</td></tr>` : ''}
</tbody></table>
${hookChanges(c.hookChanges ?? [])}
${(c.warnings ?? []).map((w) => html`<p class="note">${fold(w, 300)}</p>`)}
</li>`;
}

function hookChanges(changes: HookChange[]): SafeHtml {
  if (changes.length === 0) return html``;
  return html`<div class="scroll"><table class="hook-diff"><caption>Hooks that changed</caption>
<thead><tr><th scope="col">Hook</th><th scope="col">Change</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
<tbody>${changes.map(
    (h) =>
      html`<tr><td>${fold(h.hookId, 60)}</td><td>${h.kind.replace(/_/g, ' ')}</td><td class="del">${state(h.old)}</td><td class="add">${state(h.new)}</td></tr>`,
  )}</tbody></table></div>`;
}

function state(s: HookState | null): SafeHtml {
  if (s === null) return html`<span class="none">did not match</span>`;
  return html`${s.status}${s.status === 'completed' ? html` ${decisionBadge(s.decision)}` : ''}${s.decisive ? ' decisive' : ''}${
    s.reasonCode ? html` <code>${s.reasonCode}</code>` : ''
  }${s.failureReason ? html` <span class="hot">${s.failureReason}</span>` : ''}`;
}
