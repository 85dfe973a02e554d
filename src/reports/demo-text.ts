import { relative } from 'node:path';
import { formatDuration, oneLine, summarise } from './format.js';
import type { Paint } from './paint.js';
import type { HookSet } from '../domain/hooks.js';
import type { Report } from '../domain/outcomes.js';
import type { Explanation } from '../ledger/queries/explain.js';

export interface DemoSummary {
  ledgerPath: string;
  sessionPath: string;
  hookSet: HookSet;
  reports: Report[];
  denials: Explanation[];
  dbFlag: string;
}

/** The demo's closing text: what happened overall, then each denial as the ledger explains it. */
export function renderDemoSummary(s: DemoSummary, paint: Paint): string {
  const count = (pred: (r: Report) => boolean) => s.reports.filter(pred).length;
  const outcomes = s.reports.flatMap((r) => r.outcomes);
  const timeouts = outcomes.filter((o) => o.status === 'timed_out');
  const lines = [
    paint('bold', 'hookledger demo'),
    `  ${s.reports.length} Claude Code events from ${displayPath(s.sessionPath)}`,
    `  hook set ${s.hookSet.name}@${s.hookSet.version}: ${s.hookSet.hooks.length} hooks (${s.hookSet.fingerprint.slice(0, 12)})`,
    `  ledger   ${s.ledgerPath}`,
    '',
    `  decisions  ${paint('red', `${count((r) => r.decision === 'deny')} deny`)}, ${paint('yellow', `${count((r) => r.decision === 'ask')} ask`)}, ` +
      `${count((r) => r.decision === 'allow')} allow, ${count((r) => r.decision === 'none')} none (no objection)`,
    `  modified   ${count((r) => r.modifiedInput !== null)} input(s) rewritten by a guardrail`,
    `  hooks      ${outcomes.filter((o) => o.executionOrder !== null || o.status === 'pending').length} runs, ` +
      `${outcomes.filter((o) => o.status === 'skipped').length} skipped after a deny, ${timeouts.length} timed out ` +
      `(${[...new Set(timeouts.map((o) => `${o.hookId}: fail-${o.decisive ? 'closed' : 'open'}`))].join(', ')})`,
    '',
    paint('bold', `Denials (${s.denials.length})`),
  ];
  for (const e of s.denials) {
    const inv = e.invocation;
    const subject = inv.toolName ? `${inv.toolName}` : inv.point;
    lines.push('');
    lines.push(
      `  #${inv.id} ${subject}  ${paint('red', 'DENY')} by ${paint('bold', inv.decisiveHookId ?? '?')} [${inv.reasonCode ?? '-'}]`,
    );
    lines.push(`    ${oneLine(inv.message ?? '')}`);
    lines.push(`    input  ${summarise(e.input, 70)}`);
    const chain = e.outcomes
      .filter((o) => o.mode === 'foreground')
      .map((o) =>
        o.status === 'skipped'
          ? paint('dim', `${o.hookId}(skipped)`)
          : `${o.hookId}(${o.status === 'completed' ? o.decision : o.status} ${formatDuration(o.durationUs)})`,
      );
    lines.push(`    hooks  ${chain.join(' → ')}`);
  }
  lines.push('');
  lines.push(`Explore: hookledger explain <id> --db ${s.dbFlag}      (e.g. #${s.denials[0]?.invocation.id ?? 1})`);
  return lines.join('\n');
}

function displayPath(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}
