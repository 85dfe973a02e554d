import { formatTime, oneLine, table } from './format.js';
import { SGR_SEQUENCE, type Paint } from './paint.js';
import type { ChangeKind, DecisionState, HookChange, HookState, ReplayResult } from '../domain/replay.js';
import type { ReplayRunDetail, ReplayRunSummary } from '../ledger/queries/replay-runs.js';

const WIDTH = 80;

const CHANGE_LABEL: Record<ChangeKind, string> = {
  unchanged: 'unchanged',
  newly_denied: 'newly denied',
  newly_allowed: 'newly allowed',
  now_asks: 'now asks',
  other_hook: 'decided by another hook',
  other_reason: 'decided for another reason',
  modified_differently: 'input now modified differently',
  failed: 'failed during replay',
};

const CHANGE_COLOUR: Record<ChangeKind, Parameters<Paint>[0]> = {
  unchanged: 'dim',
  newly_denied: 'red',
  newly_allowed: 'green',
  now_asks: 'yellow',
  other_hook: 'cyan',
  other_reason: 'cyan',
  modified_differently: 'cyan',
  failed: 'red',
};

/**
 * The text form of a replay run: what was replayed against what, the totals, then each change
 * (the invocation, old and new decision with their decisive hooks and messages, and which
 * hooks' outcomes changed), then what the baseline did not reproduce.
 */
export function renderReplayRun(detail: ReplayRunDetail, paint: Paint): string {
  const { run } = detail;
  const t = run.totals;
  const lines: string[] = [];
  const status =
    run.status === 'completed'
      ? paint('green', 'completed')
      : run.status === 'incomplete'
        ? paint('yellow', 'INCOMPLETE')
        : paint('yellow', run.status);
  lines.push(`${paint('bold', `Replay run ${run.id}`)}  ${hookSetLabel(run.hookSet)}  ${status}`);
  if (run.status === 'incomplete') {
    lines.push(paint('yellow', `  stopped after ${t.replayed} of ${t.selected} invocations; the results so far are kept`));
  }
  lines.push(`  selection   ${describeSelection(run)}`);
  if (run.baseline) lines.push(`  baseline    ${hookSetLabel(run.baseline)}`);
  lines.push(
    `  options     ${run.options.withBackground ? 'background hooks run' : 'background hooks not run'}, concurrency ${run.options.concurrency ?? '-'}`,
  );
  lines.push(
    `  started     ${formatTime(run.startedAt)}${run.finishedAt !== null ? `  took ${formatMs(run.finishedAt - run.startedAt)}` : ''}`,
  );
  lines.push('');
  const rows: [string, number, ChangeKind | null][] = [
    ['replayed', t.replayed, null],
    ['unchanged', t.unchanged, 'unchanged'],
    ['newly denied', t.newlyDenied, 'newly_denied'],
    ['newly allowed', t.newlyAllowed, 'newly_allowed'],
    ['now asks', t.nowAsks, 'now_asks'],
    ['decided by another hook', t.otherHook, 'other_hook'],
    ['decided for another reason', t.otherReason, 'other_reason'],
    ['input now modified differently', t.modifiedDifferently, 'modified_differently'],
    ['failed during replay', t.failed, 'failed'],
  ];
  if (run.baseline) rows.push(['not reproduced by the baseline', t.baselineMismatches, null]);
  if (t.redacted > 0) rows.push(['replayed with redacted input', t.redacted, null]);
  const labelWidth = Math.max(...rows.map(([label]) => label.length));
  const numberWidth = Math.max(...rows.map(([, n]) => String(n).length));
  for (const [label, count, kind] of rows) {
    const text = `  ${label.padEnd(labelWidth)}  ${String(count).padStart(numberWidth)}`;
    lines.push(kind && kind !== 'unchanged' && count > 0 ? paint(CHANGE_COLOUR[kind], text) : text);
  }

  lines.push('');
  if (detail.changedTotal === 0) {
    lines.push(run.baseline ? 'No decision differs from the baseline.' : 'No decision changed.');
  } else {
    lines.push(paint('bold', `Changes (${detail.changedTotal})`));
    for (const change of detail.changes) lines.push(...renderChange(change, paint));
    lines.push(...more(detail.changedTotal - detail.changes.length, run.id));
  }
  if (detail.baselineMismatchTotal > 0) {
    lines.push('');
    lines.push(paint('bold', `Not reproduced by the baseline (${detail.baselineMismatchTotal})`));
    lines.push(
      ...wrap(
        'the old hook set decides these differently now than when they were recorded (nondeterministic or environment-dependent hooks); changes are measured against the baseline, so these are not counted as effects of the new set',
        '  ',
      ),
    );
    for (const mismatch of detail.baselineMismatches) lines.push(...renderMismatch(mismatch, paint));
    lines.push(...more(detail.baselineMismatchTotal - detail.baselineMismatches.length, run.id));
  }
  if (t.redacted > 0) {
    lines.push('');
    const one = t.redacted === 1;
    const text = `warning: ${t.redacted} invocation${one ? ' was' : 's were'} recorded with redacted input; ${one ? 'its' : 'their'} replay used the redacted input, so it may not match what the agent sent`;
    lines.push(...wrap(text, '').map((l) => paint('yellow', l)));
  }
  return lines.join('\n');
}

/** `hookledger replay list`: one line per run, most recent first. */
export function renderReplayRunList(runs: ReplayRunSummary[], paint: Paint): string {
  if (runs.length === 0) return 'No replay runs yet (hookledger replay --config NEW_HOOKS runs one).';
  return table(
    ['run', 'status', 'started', 'replayed', 'changed', 'hook set'],
    runs.map((r) => [
      String(r.id),
      r.status === 'completed' ? r.status : paint('yellow', r.status),
      formatTime(r.startedAt),
      `${r.totals.replayed}/${r.totals.selected}`,
      String(r.totals.replayed - r.totals.unchanged),
      `${r.hookSet.name}@${r.hookSet.version}${r.baseline ? ` (baseline ${r.baseline.name}@${r.baseline.version})` : ''}`,
    ]),
    WIDTH,
  );
}

function renderChange(c: ReplayResult, paint: Paint): string[] {
  const lines = [cut(`  ${paint('bold', `#${c.invocationId}`)}  ${subject(c)}`)];
  lines.push(`      ${paint(CHANGE_COLOUR[c.change], CHANGE_LABEL[c.change])}`);
  if (c.old) lines.push(cut(`      was  ${describeDecision(c.old)}`));
  if (c.new) lines.push(cut(`      now  ${describeDecision(c.new)}`));
  if (c.error) lines.push(cut(`      error  ${c.error}`));
  if (c.hookChanges && c.hookChanges.length > 0)
    lines.push(...wrap(`hooks  ${c.hookChanges.map(describeHookChange).join('; ')}`, '      ', '             '));
  if (c.baselineMismatch) lines.push(paint('yellow', '      (the baseline did not reproduce the recording either)'));
  for (const warning of c.warnings ?? [])
    lines.push(...wrap(`warning  ${warning}`, '      ', '               ').map((l) => paint('yellow', l)));
  return lines;
}

function renderMismatch(c: ReplayResult, paint: Paint): string[] {
  const lines = [cut(`  ${paint('bold', `#${c.invocationId}`)}  ${subject(c)}`)];
  if (c.recorded) lines.push(cut(`      recorded  ${describeDecision(c.recorded)}`));
  if (c.old) lines.push(cut(`      baseline  ${describeDecision(c.old)}`));
  if (c.baselineHookChanges && c.baselineHookChanges.length > 0) {
    lines.push(...wrap(`hooks     ${c.baselineHookChanges.map(describeHookChange).join('; ')}`, '      ', '                '));
  }
  return lines;
}

function subject(c: ReplayResult): string {
  const parts = [`session ${c.sessionId ?? '-'}`, ...(c.agent ? [oneLine(c.agent)] : []), c.toolName ?? c.point ?? '-'];
  return `${parts.join('  ')}  ${c.input ?? '-'}`;
}

/** `deny by no-rm [safety_violation]: rm -rf is not allowed`, `none`, `allow by x`. */
export function describeDecision(d: DecisionState): string {
  if (d.decisiveHookId === null) return d.decision === 'none' ? 'none (no guardrail decided)' : d.decision;
  const reason = d.reasonCode ? ` [${d.reasonCode}]` : '';
  const message = d.message ? `: ${oneLine(d.message)}` : '';
  return `${d.decision} by ${d.decisiveHookId}${reason}${message}`;
}

/** One short phrase per hook: `no-rm: none → deny`, `audit: now skipped`, `lint: new (returned deny)`. */
export function describeHookChange(h: HookChange): string {
  switch (h.kind) {
    case 'new':
      return `${h.hookId}: new (${stateWord(h.new!)})`;
    case 'removed':
      return `${h.hookId}: removed (was ${stateWord(h.old!)})`;
    case 'now_timing_out':
      return `${h.hookId}: now times out`;
    case 'now_failing':
      return `${h.hookId}: now fails (${h.new!.failureReason ?? 'failed'})`;
    case 'no_longer_failing':
      return `${h.hookId}: no longer fails (${stateWord(h.new!)})`;
    case 'now_skipped':
      return `${h.hookId}: now skipped`;
    case 'no_longer_skipped':
      return `${h.hookId}: now runs (${stateWord(h.new!)})`;
    case 'decision':
      return `${h.hookId}: ${stateWord(h.old!)} → ${stateWord(h.new!)}`;
    case 'now_decisive':
      return `${h.hookId}: now decisive`;
    case 'no_longer_decisive':
      return `${h.hookId}: no longer decisive`;
  }
}

function stateWord(s: HookState): string {
  if (s.status === 'completed') {
    const word = s.decision ?? 'none';
    const reason = s.reasonCode ? ` ${s.reasonCode}` : '';
    const violation = s.failureReason ? ` (${s.failureReason})` : '';
    return `${word}${reason}${violation}`;
  }
  return s.status;
}

function describeSelection(run: ReplayRunSummary): string {
  const f = run.selection.filter;
  const parts: string[] = [];
  if (f.sessionId !== undefined) parts.push(`session ${f.sessionId}`);
  if (f.toolName !== undefined) parts.push(`tool ${f.toolName}`);
  if (f.agent !== undefined) parts.push(`agent ${f.agent}`);
  if (f.host !== undefined) parts.push(`host ${f.host}`);
  if (f.point !== undefined) parts.push(`point ${f.point}`);
  if (f.hookId !== undefined) parts.push(`decided by ${f.hookId}`);
  if (f.reasonCode !== undefined) parts.push(`reason ${f.reasonCode}`);
  if (f.decision !== undefined) parts.push(`decision ${f.decision}`);
  if (f.hookSet !== undefined) parts.push(`hook set ${f.hookSet}`);
  if (f.since !== undefined) parts.push(`since ${formatTime(f.since)}`);
  if (f.until !== undefined) parts.push(`until ${formatTime(f.until)}`);
  if (run.selection.limit !== undefined) parts.push(`last ${run.selection.limit}`);
  return `${parts.length > 0 ? parts.join(', ') : 'all completed invocations'} (${run.totals.selected} selected)`;
}

function hookSetLabel(h: { name: string; version: string; fingerprint: string }): string {
  return `${h.name}@${h.version} (${h.fingerprint.slice(0, 12)})`;
}

function more(hidden: number, runId: number): string[] {
  return hidden > 0 ? [`  … and ${hidden} more (hookledger replay show ${runId} --all, or --json)`] : [];
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)}s`;
}

const ANSI = new RegExp(SGR_SEQUENCE.source, 'g');

/** Cuts a line to the terminal width, counting only visible characters. */
function cut(line: string): string {
  const visible = line.replace(ANSI, '');
  if (visible.length <= WIDTH) return line;
  // Styled lines are short prefixes plus plain text: cut the plain text at the end.
  const excess = visible.length - (WIDTH - 1);
  return `${line.slice(0, line.length - excess)}…`;
}

/** Wraps plain text at word boundaries to the terminal width; later lines take `rest` as indent. */
function wrap(text: string, first: string, rest = first): string[] {
  const lines: string[] = [];
  let line = first;
  let empty = true;
  for (const word of text.split(' ')) {
    if (!empty && line.length + 1 + word.length > WIDTH) {
      lines.push(line);
      line = rest;
      empty = true;
    }
    line += empty ? word : ` ${word}`;
    empty = false;
  }
  lines.push(line);
  return lines.map(cut);
}
