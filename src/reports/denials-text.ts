import { formatTime, summarise, table } from './format.js';
import type { Paint } from './paint.js';
import type { DenialGroups, DenialPage } from '../ledger/queries/denials.js';

/** `2026-11-01 12:00:03`: UTC, to the second, without the ISO punctuation that costs columns. */
export function shortTime(ms: number): string {
  return formatTime(ms)
    .replace('T', ' ')
    .replace(/(\.\d+)?Z$/, '');
}

/** Cuts an identifier to `max` characters, keeping its start (ids and sessions are recognised by their prefix). */
export function clip(text: string | null, max: number): string {
  if (text === null) return '-';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * The text form of `hookledger denials`: one aligned line per denial (id for `explain`, time,
 * session, agent, tool, decisive hook), and under it the reason and message, indented.
 */
export function renderDenials(page: DenialPage, paint: Paint, width = 80): string {
  if (page.rows.length === 0) return 'no denials match';
  const rows = page.rows.map((r) => [
    String(r.invocationId),
    shortTime(r.startedAt),
    clip(r.sessionId, 18),
    clip(r.agent, 11),
    clip(r.toolName ?? r.point, 12),
    r.decisiveHookId ?? '-',
  ]);
  const lines = table(['ID', 'WHEN (UTC)', 'SESSION', 'AGENT', 'TOOL', 'HOOK'], rows, width).split('\n');
  const out = [paint('bold', lines[0]!)];
  page.rows.forEach((r, i) => {
    out.push(lines[i + 1]!);
    const code = r.reasonCode ?? 'deny';
    out.push(`    ${paint('red', code)}: ${summarise(r.message ?? '(no message)', width - 6 - code.length)}`);
  });
  out.push('');
  out.push(
    page.nextCursor
      ? paint('dim', `more: --cursor ${page.nextCursor}   (details: hookledger explain ID)`)
      : paint('dim', 'end of list   (details: hookledger explain ID)'),
  );
  return out.join('\n');
}

/** The text form of `hookledger denials --group-by ...`: counts with a bar, largest first. */
export function renderDenialGroups(g: DenialGroups, paint: Paint, width = 80): string {
  if (g.total === 0) return 'no denials match';
  const max = Math.max(...g.groups.map((x) => x.count));
  const label = { hook: 'HOOK', tool: 'TOOL', reason: 'REASON', session: 'SESSION', agent: 'AGENT', day: 'DAY (UTC)' }[g.groupBy];
  const keyWidth = Math.min(36, Math.max(label.length, ...g.groups.map((x) => (x.key ?? '(none)').length)));
  const countWidth = Math.max(5, String(max).length);
  const barWidth = Math.max(5, width - keyWidth - countWidth - 6 - 6);
  const lines = [paint('bold', `${label.padEnd(keyWidth)}  ${'COUNT'.padStart(countWidth)}  ${'SHARE'.padStart(5)}`)];
  for (const x of g.groups) {
    const share = `${((x.count / g.total) * 100).toFixed(1)}%`;
    const bar = '█'.repeat(Math.max(1, Math.round((x.count / max) * barWidth)));
    lines.push(
      `${clip(x.key ?? '(none)', keyWidth).padEnd(keyWidth)}  ${String(x.count).padStart(countWidth)}  ${share.padStart(5)}  ${paint('red', bar)}`,
    );
  }
  lines.push('');
  const shown = g.groups.length < g.totalGroups ? `, ${g.groups.length} of ${g.totalGroups} groups shown (--limit)` : '';
  lines.push(paint('dim', `${g.total} denials${shown}`));
  return lines.join('\n');
}
