import { formatDuration, oneLine, summarise, table } from './format.js';
import type { Paint } from './paint.js';
import type { SessionPage, SessionSummary, SessionTimeline, TimelineEvent } from '../ledger/queries/sessions.js';
import { shortTime } from './denials-text.js';

/** 2h05m, 13m, 42s: how long a session lasted. */
export function span(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${String(h % 24).padStart(2, '0')}h`;
}

const count = (n: number, paint: Paint, colour: 'red' | 'yellow') => (n === 0 ? '0' : paint(colour, String(n)));

/**
 * The text form of `hookledger sessions`: most recently active first. The list is where a reader
 * picks an id for `hookledger sessions ID`, so the session id is the last column and is never
 * cut: the other columns take 43 characters, which leaves 37 for a 36-character UUID. (How long
 * a session lasted is in its timeline's header.)
 */
export function renderSessions(page: SessionPage, paint: Paint, width = 80): string {
  if (page.rows.length === 0) return 'no sessions match';
  const rows = page.rows.map((s) => [
    shortTime(s.lastSeen).slice(0, 16),
    String(s.invocations),
    count(s.denials, paint, 'red'),
    count(s.failures, paint, 'yellow'),
    count(s.timeouts, paint, 'yellow'),
    s.sessionId,
  ]);
  const lines = table(['LAST SEEN (UTC)', 'EVENTS', 'DENY', 'FAIL', 'T/O', 'SESSION'], rows, width, { keep: [5] }).split('\n');
  lines[0] = paint('bold', lines[0]!);
  lines.push('');
  lines.push(paint('dim', `${page.nextCursor ? `more: --cursor ${page.nextCursor}   ` : ''}timeline: hookledger sessions SESSION`));
  return lines.join('\n');
}

function sessionHeader(s: SessionSummary, paint: Paint): string[] {
  return [
    `${paint('bold', `Session ${s.sessionId}`)}${s.agents.length > 0 ? `  (${s.agents.map((a) => oneLine(a)).join(', ')})` : ''}`,
    `  ${shortTime(s.firstSeen)} → ${shortTime(s.lastSeen)} UTC (${span(s.lastSeen - s.firstSeen)})`,
    `  ${s.invocations} events, ${s.denials} denied, ${s.asks} asked, ${s.modified} modified, ` +
      `${s.failures} hook failures, ${s.timeouts} timeouts`,
  ];
}

const DECISION_COLOUR = { deny: 'red', ask: 'yellow', allow: 'green', none: 'dim' } as const;

/** What the last column of a timeline line says: what was attempted (or, when modified, what the agent went on with). */
function eventDetail(e: TimelineEvent): string {
  const problems = [e.failures > 0 ? `${e.failures} failed` : '', e.timeouts > 0 ? `${e.timeouts} timed out` : '']
    .filter(Boolean)
    .join(', ');
  const prefix = problems ? `(${problems}) ` : '';
  if (e.status !== 'completed') return `${prefix}${e.status}${e.message ? `: ${oneLine(e.message)}` : ''}`;
  if (e.modified) return `${prefix}→ ${summarise(e.modifiedInput, 200)}`;
  return `${prefix}${summarise(e.input, 200)}`;
}

/**
 * The text form of `hookledger sessions <id>`: the session's events in recorded order, each
 * with its decision and decisive hook; `*` marks an input a hook modified (the detail then
 * shows what the agent went on with).
 */
export function renderTimeline(t: SessionTimeline, paint: Paint, width = 80): string {
  const lines = sessionHeader(t.session, paint);
  lines.push('');
  if (t.events.length === 0) {
    lines.push('  no events on this page');
    return lines.join('\n');
  }
  let day = '';
  const rows: string[][] = [];
  const dayBreaks = new Map<number, string>();
  for (const e of t.events) {
    const when = shortTime(e.startedAt);
    if (when.slice(0, 10) !== day) {
      day = when.slice(0, 10);
      dayBreaks.set(rows.length, day);
    }
    const decision = e.decision ?? e.status;
    const colour = e.decision ? DECISION_COLOUR[e.decision] : 'yellow';
    rows.push([
      when.slice(11),
      String(e.invocationId),
      e.toolName ? `${shortPoint(e.point)} ${e.toolName}` : shortPoint(e.point),
      `${paint(colour, decision)}${e.modified ? '*' : ''}`,
      e.decisiveHookId ?? (e.modifiedBy.length > 0 ? e.modifiedBy.join(',') : '-'),
      eventDetail(e),
    ]);
  }
  const rendered = table(['TIME', 'ID', 'EVENT', 'DECISION', 'BY', 'DETAIL'], rows, width - 2).split('\n');
  lines.push(`  ${paint('bold', rendered[0]!)}`);
  rendered.slice(1).forEach((line, i) => {
    const breakDay = dayBreaks.get(i);
    if (breakDay !== undefined) lines.push(paint('dim', `  ${breakDay}`));
    lines.push(`  ${line}`);
    // Why it was denied or asked gets a line of its own: it is what an auditor reads.
    const e = t.events[i]!;
    if (e.decision === 'deny' || e.decision === 'ask') {
      const why = `${e.reasonCode ? `${e.reasonCode}: ` : ''}${e.message ?? '(no message)'}`;
      lines.push(`            ${paint(e.decision === 'deny' ? 'red' : 'yellow', summarise(why, width - 12))}`);
    }
  });
  lines.push('');
  const took = t.events.reduce((a, e) => a + (e.durationUs ?? 0), 0);
  lines.push(paint('dim', `  * input modified by a hook (BY)   hooks took ${formatDuration(took)} in all`));
  lines.push(paint('dim', '  details of an event: hookledger explain ID'));
  if (t.nextCursor) lines.push(paint('dim', `  more: --cursor ${t.nextCursor}`));
  return lines.join('\n');
}

const SHORT_POINTS: Record<string, string> = {
  pre_tool_use: 'pre',
  post_tool_use: 'post',
  post_tool_use_failure: 'post-fail',
  user_prompt_submit: 'prompt',
  session_start: 'start',
  session_end: 'end',
  permission_request: 'permission',
  subagent_stop: 'subagent-stop',
  pre_compact: 'compact',
};

function shortPoint(point: string): string {
  return SHORT_POINTS[point] ?? point;
}
