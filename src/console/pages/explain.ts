import type { Outcome } from '../../domain/outcomes.js';
import { count, duration, utc } from '../format.js';
import { fold, html, jsonBlock, type SafeHtml } from '../html.js';
import { lineDiff } from '../line-diff.js';
import type { PageContext, PageResult } from '../page.js';
import { decisionBadge, facts, invocationLink, sessionLink } from './components.js';

/** Lines of a long diff shown before the rest is folded. */
const DIFF_LINES_SHOWN = 400;

/** /invocations/<id or tool_use_id>: the explain report, decisive hook highlighted, the input as sent and as modified as a diff. */
export async function explainPage(ctx: PageContext, ref: string): Promise<PageResult> {
  const e = await ctx.ledger.explain(ref);
  const inv = e.invocation;
  const outcomes = e.outcomes.map(
    (o) => html`<tr class="${o.decisive ? 'decisive' : ''}${o.status !== 'completed' ? ` s-${o.status}` : ''}">
<td class="num">${o.executionOrder ?? html`<span class="none">—</span>`}</td>
<td>${o.decisive ? html`<strong>${o.hookId}</strong> <span class="badge decisive-tag">decisive</span>` : o.hookId}</td>
<td class="num">${o.priority}</td><td class="num">${o.registrationIndex}</td><td>${o.mode}</td><td>${o.capability}</td><td>${o.runtime}</td>
<td>${o.status}</td><td>${decisionBadge(o.decision)}</td><td class="num">${duration(o.durationUs)}</td>
<td class="wide">${outcomeNote(o)}</td></tr>`,
  );
  return {
    title: `Invocation ${inv.id}`,
    section: null,
    body: html`<h1>Invocation #${inv.id} ${decisionBadge(inv.decision)}</h1>
${facts([
  ['When', utc(inv.startedAt)],
  ['Point', inv.eventName ? `${inv.point} (${inv.eventName})` : inv.point],
  ['Tool', inv.toolName],
  ['tool_use_id', inv.toolUseId ? fold(inv.toolUseId, 80) : null],
  ['Session', inv.sessionId ? html`${sessionLink(inv.sessionId)}${inv.turn !== null ? html`, turn ${inv.turn}` : ''}` : null],
  ['Agent', inv.agent ? fold(inv.agent, 80) : null],
  ['Working directory', inv.cwd ? fold(inv.cwd, 120) : null],
  ['Status', inv.status],
  ['Decisive hook', inv.decisiveHookId ? html`<strong class="decisive-name">${inv.decisiveHookId}</strong>` : null],
  ['Reason code', inv.reasonCode ? html`<code>${inv.reasonCode}</code>` : null],
  ['Message', inv.message !== null ? fold(inv.message, 400) : null],
  ['Hook set', html`${e.hookSet.name}@${e.hookSet.version} <code>${e.hookSet.fingerprint.slice(0, 12)}</code> (${e.hookSet.strategy})`],
  ['Duration', duration(inv.durationUs)],
])}
<section aria-labelledby="hooks-h"><h2 id="hooks-h">Matched hooks in execution order (${count(e.outcomes.length)})</h2>
<div class="scroll"><table class="outcomes">
<thead><tr><th scope="col" class="num">#</th><th scope="col">Hook</th><th scope="col" class="num">Priority</th><th scope="col" class="num">Reg.</th>
<th scope="col">Mode</th><th scope="col">Capability</th><th scope="col">Runtime</th><th scope="col">Status</th><th scope="col">Returned</th>
<th scope="col" class="num">Duration</th><th scope="col">Reason, message or failure</th></tr></thead>
<tbody>${outcomes.length > 0 ? outcomes : html`<tr><td colspan="11" class="empty">No hook matched.</td></tr>`}</tbody>
</table></div></section>
<section aria-labelledby="input-h"><h2 id="input-h">Input${e.modifiedInput !== null ? ' as sent and as modified' : ' (not modified)'}</h2>
${e.modifiedInput !== null ? inputDiff(e.input, e.modifiedInput) : jsonBlock(e.input)}
${e.redactions.length > 0 ? html`<p class="note">Redacted before storage: ${e.redactions.join(', ')}</p>` : ''}
</section>
${e.additionalContext.length > 0 ? html`<section><h2>Context added for the agent</h2>${e.additionalContext.map((c) => html`<div>${fold(c, 400, true)}</div>`)}</section>` : ''}
${e.related.length > 0 ? html`<section><h2>Same tool_use_id</h2><ul>${e.related.map((r) => html`<li>${invocationLink(r.id)} ${r.point} ${decisionBadge(r.decision)}</li>`)}</ul></section>` : ''}
<section><h2>Agent payload</h2><details><summary>Show the payload as received</summary>${jsonBlock(e.raw, 200_000)}</details></section>
${inv.sessionId ? html`<p><a href="/sessions/${encodeURIComponent(inv.sessionId)}#inv-${inv.id}">Back to the session timeline</a></p>` : ''}`,
  };
}

function outcomeNote(o: Outcome): SafeHtml {
  const parts: SafeHtml[] = [];
  if (o.reasonCode) parts.push(html`<code>${o.reasonCode}</code>`);
  if (o.failureReason)
    parts.push(html`<span class="hot">${o.failureReason}${o.failureDetail ? html`: ${fold(o.failureDetail, 160)}` : ''}</span>`);
  if (o.skipReason) parts.push(html`<span class="none">skipped: ${o.skipReason}${o.skippedBy ? ` by ${o.skippedBy}` : ''}</span>`);
  if (o.message) parts.push(fold(o.message, 160));
  return html`${parts.map((p, k) => html`${k > 0 ? ' · ' : ''}${p}`)}`;
}

/** The input as sent against the input as modified, as a unified line diff of the pretty JSON. */
export function inputDiff(before: unknown, after: unknown): SafeHtml {
  const a = typeof before === 'string' ? before : (JSON.stringify(before, null, 2) ?? '');
  const b = typeof after === 'string' ? after : (JSON.stringify(after, null, 2) ?? '');
  const lines = lineDiff(a, b);
  if (lines === null) {
    return html`<div class="sides"><div><h3>As sent</h3>${jsonBlock(before)}</div><div><h3>As modified</h3>${jsonBlock(after)}</div></div>`;
  }
  const render = (l: { op: string; text: string }) =>
    html`<span class="dl ${l.op}"><span class="sign" aria-hidden="true">${l.op === 'add' ? '+' : l.op === 'del' ? '-' : ' '}</span><span class="sr">${
      l.op === 'add' ? 'added: ' : l.op === 'del' ? 'removed: ' : ''
    }</span>${l.text.length > 2000 ? fold(l.text, 2000) : l.text}</span>\n`;
  const shown = lines.slice(0, DIFF_LINES_SHOWN);
  return html`<pre class="diff" aria-label="Input diff: lines starting with - were sent, + is what the agent went on with">${shown.map(render)}</pre>${
    lines.length > shown.length
      ? html`<details><summary>${count(lines.length - shown.length)} more lines</summary><pre class="diff">${lines.slice(DIFF_LINES_SHOWN).map(render)}</pre></details>`
      : ''
  }`;
}
