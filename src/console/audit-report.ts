import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../ledger/paths.js';
import type { Ledger } from '../ledger/ledger.js';
import type { DenialGroups } from '../ledger/queries/denials.js';
import type { SessionSummary } from '../ledger/queries/sessions.js';
import type { VerifyReport } from '../ledger/verify.js';
import { healthFlags } from '../reports/health-text.js';
import { count, duration, percent, utc } from './format.js';
import { fold, html, SafeHtml } from './html.js';
import { document } from './layout.js';

/** Sessions listed in a report; a longer period says how many more there were. */
export const REPORT_SESSIONS = 500;
const GROUPS = 50;

export interface AuditReportOptions {
  since: number;
  until: number;
  /** The verify run over the ledger (the CLI runs it; it covers the whole chain, not only the period). */
  verify: VerifyReport;
  generatedAt?: number;
}

/**
 * The period audit report (`hookledger report`): one self-contained HTML file, styles inlined
 * and no script, image or font to fetch, so it can be archived, mailed and printed to PDF as
 * it is. Sections: sessions, denials by hook and by reason, failures and timeouts per hook,
 * hook-set versions in force, replay runs, and the verify result with the chain head(s).
 */
export async function renderAuditReport(ledger: Ledger, options: AuditReportOptions): Promise<string> {
  const { since, until, verify } = options;
  const period = { since, until };
  const sessions: SessionSummary[] = [];
  let cursor: string | null = null;
  let moreSessions = false;
  do {
    const page = await ledger.listSessions(period, { limit: 200, cursor });
    sessions.push(...page.rows);
    cursor = page.nextCursor;
    if (sessions.length >= REPORT_SESSIONS) {
      moreSessions = cursor !== null || sessions.length > REPORT_SESSIONS;
      break;
    }
  } while (cursor !== null);
  const [byHook, byReason, health, hookSets, runs, heads] = await Promise.all([
    ledger.groupDenials(period, 'hook', { limit: GROUPS }),
    ledger.groupDenials(period, 'reason', { limit: GROUPS }),
    ledger.hookHealth({ since, until }),
    ledger.hookSetsInForce(since, until),
    ledger.listReplayRuns({ limit: 10_000 }),
    ledger.chainHeads(),
  ]);
  const replayRuns = runs.filter((r) => r.startedAt >= since && r.startedAt < until);
  const failing = health.hooks.filter((h) => h.failures > 0 || h.timeouts > 0 || h.interrupted > 0);
  const totals = sessions.reduce(
    (t, s) => ({
      invocations: t.invocations + s.invocations,
      denials: t.denials + s.denials,
      failures: t.failures + s.failures,
      timeouts: t.timeouts + s.timeouts,
    }),
    { invocations: 0, denials: 0, failures: 0, timeouts: 0 },
  );

  const body = html`<header>
<h1>hookledger audit report</h1>
<dl class="facts">
<dt>Period</dt><dd>${utc(since)} to ${utc(until)} (until exclusive)</dd>
<dt>Ledger</dt><dd>${fold(ledger.location, 200)}</dd>
<dt>Generated</dt><dd>${utc(options.generatedAt ?? Date.now())}</dd>
<dt>Integrity</dt><dd>${verify.ok ? html`<span class="ok">intact</span>` : html`<span class="bad">NOT intact: ${count(verify.problemCount)} problems</span>`} (details in the last section)</dd>
</dl>
</header>

<h2>Sessions (${count(sessions.length)}${moreSessions ? `+; the ${REPORT_SESSIONS} most recently active listed` : ''})</h2>
<p>${count(totals.invocations)} events, ${count(totals.denials)} denied, ${count(totals.failures)} hook failures, ${count(totals.timeouts)} hook timeouts in the sessions listed.</p>
<table><thead><tr><th>Session</th><th>First event</th><th>Last event</th><th class="num">Events</th><th class="num">Denied</th><th class="num">Asked</th><th class="num">Modified</th><th class="num">Failures</th><th class="num">Timeouts</th></tr></thead>
<tbody>${
    sessions.length === 0
      ? html`<tr><td colspan="9" class="none">No sessions in this period.</td></tr>`
      : sessions.map(
          (s) =>
            html`<tr><td><code>${fold(s.sessionId, 80)}</code></td><td>${utc(s.firstSeen)}</td><td>${utc(s.lastSeen)}</td><td class="num">${count(s.invocations)}</td><td class="num">${count(s.denials)}</td><td class="num">${count(s.asks)}</td><td class="num">${count(s.modified)}</td><td class="num">${count(s.failures)}</td><td class="num">${count(s.timeouts)}</td></tr>`,
        )
  }</tbody></table>

<h2>Denials by hook (${count(byHook.total)})</h2>
${groupTable(byHook, 'Decisive hook')}
<h2>Denials by reason</h2>
${groupTable(byReason, 'Reason code')}

<h2>Failures and timeouts</h2>
${
  failing.length === 0
    ? html`<p>No hook failed, timed out or was interrupted in this period.</p>`
    : html`<table><thead><tr><th>Hook</th><th class="num">Runs</th><th class="num">Failed</th><th class="num">Timed out</th><th class="num">Interrupted</th><th class="num">Rate</th><th class="num">p95</th><th>Flags</th></tr></thead>
<tbody>${failing.map(
        (h) =>
          html`<tr><td>${fold(h.hookId, 80)}</td><td class="num">${count(h.runs)}</td><td class="num">${count(h.failures)}</td><td class="num">${count(h.timeouts)}</td><td class="num">${count(h.interrupted)}</td><td class="num">${percent(h.failureRate)}</td><td class="num">${duration(h.p95Us)}</td><td>${healthFlags(h).join(', ')}</td></tr>`,
      )}</tbody></table>`
}
<p class="note">${count(health.hooks.length)} hooks ran in the period; ${count(health.hooks.reduce((n, h) => n + h.runs, 0))} runs in all.</p>

<h2>Hook-set versions in force</h2>
${
  hookSets.length === 0
    ? html`<p>No invocations in this period.</p>`
    : html`<table><thead><tr><th>Hook set</th><th>Version</th><th>Fingerprint</th><th>Strategy</th><th class="num">Invocations</th><th>First</th><th>Last</th></tr></thead>
<tbody>${hookSets.map(
        (h) =>
          html`<tr><td>${fold(h.name, 80)}</td><td>${fold(h.version, 40)}</td><td><code>${h.fingerprint.slice(0, 16)}</code></td><td>${h.strategy}</td><td class="num">${count(h.invocations)}</td><td>${utc(h.firstAt)}</td><td>${utc(h.lastAt)}</td></tr>`,
      )}</tbody></table>`
}

<h2>Replay runs (${count(replayRuns.length)})</h2>
${
  replayRuns.length === 0
    ? html`<p>No replay run started in this period.</p>`
    : html`<table><thead><tr><th>Run</th><th>Status</th><th>Started</th><th>Hook set</th><th class="num">Replayed</th><th class="num">Changed</th><th class="num">Newly denied</th><th class="num">Newly allowed</th></tr></thead>
<tbody>${replayRuns.map(
        (r) =>
          html`<tr><td>${r.id}</td><td>${r.status}</td><td>${utc(r.startedAt)}</td><td>${fold(`${r.hookSet.name}@${r.hookSet.version}`, 80)}</td><td class="num">${count(r.totals.replayed)}</td><td class="num">${count(r.totals.replayed - r.totals.unchanged)}</td><td class="num">${count(r.totals.newlyDenied)}</td><td class="num">${count(r.totals.newlyAllowed)}</td></tr>`,
      )}</tbody></table>`
}

<h2>Integrity</h2>
<dl class="facts">
<dt>Verify</dt><dd>${verify.ok ? html`<span class="ok">intact</span>` : html`<span class="bad">NOT intact</span>`}: ${count(verify.links)} links walked, ${count(verify.records.invocations)} invocations, ${count(verify.prunedLinks)} links pruned, ${count(verify.uncommitted)} uncommitted, in ${count(verify.durationMs)} ms</dd>
<dt>Chain head${heads.length > 1 ? 's' : ''}</dt><dd>${
    heads.length === 0
      ? 'no links'
      : heads.map(
          (h, k) =>
            html`${k > 0 ? html`<br>` : ''}${h.writer !== null ? html`writer ${fold(h.writer, 80)}: ` : ''}link ${count(h.seq)}<br><code class="hash">${h.hash}</code>`,
        )
  }</dd>
${verify.anchor ? html`<dt>Anchor</dt><dd>link ${count(verify.anchor.seq)}: ${verify.anchor.status}</dd>` : ''}
</dl>
${
  verify.problems.length > 0
    ? html`<table><thead><tr><th>Kind</th><th>Table</th><th class="num">Id</th><th>Detail</th></tr></thead><tbody>${verify.problems.map(
        (p) => html`<tr><td>${p.kind}</td><td>${p.table}</td><td class="num">${p.id}</td><td>${fold(p.detail, 300)}</td></tr>`,
      )}</tbody></table>`
    : ''
}`;
  return document(`Audit report ${utc(since)} to ${utc(until)}`, html`<style>${new SafeHtml(reportCss())}</style>`, body).value;
}

function groupTable(g: DenialGroups, label: string): SafeHtml {
  if (g.groups.length === 0) return html`<p>No denials in this period.</p>`;
  const max = Math.max(...g.groups.map((x) => x.count));
  return html`<table><thead><tr><th>${label}</th><th class="num">Denials</th><th></th><th>First</th><th>Last</th></tr></thead><tbody>${g.groups.map(
    (x) =>
      html`<tr><td>${fold(x.key ?? '(none)', 80)}</td><td class="num">${count(x.count)}</td><td class="barcell"><span class="bar w${Math.max(1, Math.round((x.count / max) * 20))}"></span></td><td>${utc(x.firstAt)}</td><td>${utc(x.lastAt)}</td></tr>`,
  )}</tbody></table>${g.totalGroups > g.groups.length ? html`<p class="note">${count(g.totalGroups - g.groups.length)} more groups not listed.</p>` : ''}`;
}

/** The report's stylesheet, inlined: from the build (dist), else the source (development). */
function reportCss(): string {
  for (const file of [
    join(packageRoot, 'dist', 'console', 'assets', 'report.css'),
    join(packageRoot, 'src', 'console', 'assets', 'report.css'),
  ]) {
    if (existsSync(file)) return readFileSync(file, 'utf8').replace(/<\//g, '<\\/');
  }
  return '';
}
