import { formatDuration, formatTime, oneLine, summarise, table } from './format.js';
import type { Paint } from './paint.js';
import type { Outcome } from '../domain/outcomes.js';
import type { Explanation } from '../ledger/queries/explain.js';

/** The text form of `hookledger explain`: the decision first, then every matched hook in execution order. */
export function renderExplanation(e: Explanation, paint: Paint): string {
  const inv = e.invocation;
  const lines: string[] = [];
  const decision = inv.decision ?? inv.status;
  const colour = decision === 'deny' ? 'red' : decision === 'ask' ? 'yellow' : decision === 'allow' ? 'green' : 'dim';
  const subject = inv.toolName ? `${inv.point} ${inv.toolName}` : inv.point;
  lines.push(`${paint('bold', `Invocation ${inv.id}`)}  ${subject}  →  ${paint(colour, decision.toUpperCase())}`);
  if (e.decisive) {
    const reason = inv.reasonCode ? ` [${inv.reasonCode}]` : '';
    lines.push(`  decided by ${paint('bold', e.decisive.hookId)}${reason}: ${oneLine(inv.message ?? '(no message)')}`);
  } else if (inv.status === 'interrupted') {
    lines.push(`  ${paint('yellow', 'interrupted')}: ${oneLine(inv.message ?? 'the process ended before the decision was committed')}`);
  } else {
    lines.push(`  no guardrail decided${inv.decision === 'none' ? ' (the agent proceeds)' : ''}`);
  }
  lines.push(`  hook set  ${e.hookSet.name}@${e.hookSet.version} (${e.hookSet.strategy}, ${e.hookSet.fingerprint.slice(0, 12)})`);
  lines.push(`  session   ${inv.sessionId ?? '-'}${inv.turn !== null ? `  turn ${inv.turn}` : ''}`);
  if (inv.agent !== null) lines.push(`  agent     ${inv.agent}${inv.eventName ? `  event ${inv.eventName}` : ''}`);
  if (inv.toolUseId) lines.push(`  tool use  ${inv.toolUseId}`);
  lines.push(`  at        ${formatTime(inv.startedAt)}  took ${formatDuration(inv.durationUs)}`);
  if (e.origin) lines.push(`  origin    ${originLine(e.origin)}`);
  lines.push('');
  if (e.outcomes.length === 0) {
    lines.push(inv.status === 'interrupted' ? '  no hook outcomes were committed' : '  no hooks matched');
  } else {
    lines.push(
      table(
        ['#', 'hook', 'prio', 'reg', 'mode', 'cap', 'status', 'returned', 'took', 'note'],
        e.outcomes.map((o) => [
          o.executionOrder === null ? '-' : String(o.executionOrder + 1),
          o.decisive ? paint('bold', `*${o.hookId}`) : o.hookId,
          String(o.priority),
          String(o.registrationIndex),
          o.mode === 'foreground' ? 'fg' : 'bg',
          o.capability === 'guardrail' ? 'guard' : 'obs',
          o.status,
          o.decision ?? '-',
          formatDuration(o.durationUs),
          outcomeNote(o),
        ]),
        200,
      )
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
    );
    lines.push(`  (* decisive)`);
  }
  lines.push('');
  lines.push(`  input     ${summarise(e.input, 200)}`);
  if (e.modifiedInput !== null) lines.push(`  modified  ${summarise(e.modifiedInput, 200)}`);
  for (const context of e.additionalContext) lines.push(`  context   ${summarise(context, 200)}`);
  if (e.redactions.length > 0) lines.push(`  redacted  ${e.redactions.join(', ')}`);
  if (e.related.length > 0)
    lines.push(`  related   ${e.related.map((r) => `${r.id} (${r.point}${r.decision ? `, ${r.decision}` : ''})`).join(', ')}`);
  return lines.join('\n');
}

/** Where a central ledger's record came from; the host and ids are data from the machines, so folded onto the line. */
function originLine(origin: NonNullable<Explanation['origin']>): string {
  return origin.kind === 'shipped'
    ? `shipped from source ${oneLine(origin.source)} (host ${oneLine(origin.host)}), invocation ${origin.sourceRef} there`
    : `written directly by writer ${oneLine(origin.writer ?? '-')} (host ${oneLine(origin.host)})`;
}

/** What the last column of the outcome table says: why it failed, why it was skipped, or its message. */
export function outcomeNote(o: Outcome): string {
  return oneLine(rawOutcomeNote(o));
}

function rawOutcomeNote(o: Outcome): string {
  if (o.failureReason) return `${o.failureReason}: ${o.failureDetail ?? ''}`.trim();
  if (o.status === 'skipped') return `skipped (${o.skipReason}${o.skippedBy ? ` by ${o.skippedBy}` : ''})`;
  if (o.status === 'pending') return 'still running';
  if (o.status === 'interrupted') return o.failureDetail ?? 'interrupted';
  if (o.reasonCode) return `[${o.reasonCode}] ${o.message ?? ''}`;
  if (o.decision === 'modify') return `modified input${o.message ? `: ${o.message}` : ''}`;
  // An allow or ask that also rewrote the input (Claude Code's decision with updatedInput).
  if (o.modifiedInput !== null) return `rewrote the input${o.message ? `: ${o.message}` : ''}`;
  return o.message ?? '';
}
