import type { ChainHead } from '../../ledger/queries/chain-head.js';
import { readAnchor } from '../../ledger/verify.js';
import { count, utc } from '../format.js';
import { fold, html, type SafeHtml } from '../html.js';
import type { PageContext, PageResult } from '../page.js';
import { facts } from './components.js';

/** A verify result older than this is refreshed when the page is opened. */
const STALE_MS = 5 * 60_000;

/**
 * /integrity: the chain head(s) (read now: one per writer where each writer keeps its own chain), the last anchor (the `--anchor` file), and the result
 * of `verify`, which runs in a worker: opening the page starts one when the last is missing or
 * stale, and the page says so until it finishes (the script reloads it).
 */
export async function integrityPage(ctx: PageContext): Promise<PageResult> {
  const heads = await ctx.ledger.chainHeads();
  const state = ctx.integrity;
  const last = state.last();
  const fresh = last !== null && ctx.now - last.finishedAt < STALE_MS;
  if (ctx.query.get('verify') === 'now' || !fresh) state.start();
  const running = state.runningSince();
  let anchor = null;
  let anchorProblem: string | null = null;
  if (state.anchorFile) {
    try {
      anchor = readAnchor(state.anchorFile) ?? null;
    } catch (error) {
      anchorProblem = error instanceof Error ? error.message : String(error);
    }
  }
  const report = last && 'report' in last ? last.report : null;
  return {
    title: 'Integrity',
    section: 'integrity',
    body: html`<h1>Integrity</h1>
<section aria-labelledby="head-h"><h2 id="head-h">Chain head${heads.length > 1 ? 's' : ''}</h2>
${chainHeadsView(heads)}</section>
<section aria-labelledby="verify-h"><h2 id="verify-h">Verify</h2>
${running !== null ? html`<p class="running" data-reload="2000" role="status">Verifying since ${utc(running)}… <a href="/integrity">Reload</a></p>` : ''}
${
  last === null
    ? html`<p>No verify has finished yet.</p>`
    : 'error' in last
      ? html`<p class="error">Verify could not run: ${fold(last.error, 300)} (${utc(last.finishedAt)})</p>`
      : html`<p class="verdict ${last.report.ok ? 'ok' : 'bad'}"><strong>${last.report.ok ? 'Intact' : 'NOT intact'}</strong>: ${count(last.report.links)} links walked,
${count(last.report.records.invocations)} invocations, ${count(last.report.records.backgroundOutcomes)} background outcomes, ${count(last.report.records.checkpoints)} prune checkpoints
(${count(last.report.prunedLinks)} links pruned, ${count(last.report.uncommitted)} uncommitted), in ${count(last.report.durationMs)} ms, finished ${utc(last.finishedAt)}.</p>
${
  last.report.problems.length > 0
    ? html`<div class="scroll"><table><caption>${count(last.report.problemCount)} problems (first broken record first)</caption>
<thead><tr><th scope="col">Kind</th><th scope="col">Table</th><th scope="col" class="num">Id</th><th scope="col" class="num">Link</th><th scope="col">Detail</th></tr></thead>
<tbody>${last.report.problems.map(
        (p) =>
          html`<tr><td>${p.kind}</td><td>${p.table}</td><td class="num">${p.id}</td><td class="num">${p.seq ?? ''}</td><td class="wide">${fold(p.detail, 300)}</td></tr>`,
      )}</tbody></table></div>`
    : ''
}`
}
<p><a href="/integrity?verify=now">Verify again</a></p>
</section>
<section aria-labelledby="anchor-h"><h2 id="anchor-h">Last anchor</h2>
${
  !state.anchorFile
    ? html`<p>No anchor file given (start the console with <code>--anchor FILE</code>, the file <code>hookledger verify --anchor FILE</code> keeps).</p>`
    : anchorProblem
      ? html`<p class="error">${fold(anchorProblem, 300)}</p>`
      : anchor === null
        ? html`<p>The anchor file ${state.anchorFile} does not exist yet.</p>`
        : facts([
            ['File', state.anchorFile],
            ['Link', count(anchor.seq)],
            ['Hash', html`<code class="hash">${anchor.hash}</code>`],
            ['Written', anchor.at ?? null],
            [
              'Check',
              report?.anchor
                ? html`<strong class="${report.anchor.status === 'mismatch' ? 'hot' : ''}">${report.anchor.status}</strong>`
                : 'after the next verify',
            ],
          ])
}</section>`,
  };
}

/** One chain: its head as facts; several (one per writer): a table, a row per writer. */
function chainHeadsView(heads: ChainHead[]): SafeHtml {
  if (heads.length === 0) return html`<p class="empty">No chain links yet.</p>`;
  if (heads.length === 1 && heads[0]!.writer === null) {
    const head = heads[0]!;
    return facts([
      ['Link', count(head.seq)],
      ['Hash', html`<code class="hash">${head.hash}</code>`],
      ['Kind', head.kind],
      ['Written', utc(head.at)],
    ]);
  }
  return html`<p>Each writer appends its own chain; verify walks every one.</p>
<div class="scroll"><table class="chain-heads"><thead><tr><th scope="col">Writer</th><th scope="col" class="num">Link</th><th scope="col">Hash</th>
<th scope="col">Kind</th><th scope="col">Written</th></tr></thead>
<tbody>${heads.map(
    (h) =>
      html`<tr><td>${fold(h.writer ?? '—', 80)}</td><td class="num">${count(h.seq)}</td><td><code class="hash">${h.hash}</code></td><td>${h.kind ?? html`<span class="none">—</span>`}</td><td>${utc(h.at)}</td></tr>`,
  )}</tbody></table></div>`;
}
