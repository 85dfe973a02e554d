import { formatDuration, oneLine, summarise } from './format.js';
import type { Paint } from './paint.js';
import type { Report } from '../domain/outcomes.js';
import { outcomeNote } from './explain-text.js';

/** The text form of a fresh report (`hookledger run`): the decision, who decided, and one line per hook. */
export function renderReport(report: Report, paint: Paint): string {
  const colour = report.decision === 'deny' ? 'red' : report.decision === 'ask' ? 'yellow' : report.decision === 'allow' ? 'green' : 'dim';
  const lines = [
    `${paint(colour, report.decision.toUpperCase())}  ${report.point}  (invocation ${report.invocationId}, ${formatDuration(report.durationUs)})`,
  ];
  if (report.decisiveHookId) {
    lines.push(
      `  decided by ${report.decisiveHookId}${report.reasonCode ? ` [${report.reasonCode}]` : ''}: ${oneLine(report.message ?? '(no message)')}`,
    );
  }
  if (report.modifiedInput !== null) lines.push(`  modified input: ${summarise(report.modifiedInput, 120)}`);
  for (const o of report.outcomes) {
    lines.push(
      `  ${o.decisive ? '*' : ' '} ${o.hookId}  ${o.status}${o.decision ? ` ${o.decision}` : ''}  ${formatDuration(o.durationUs)}  ${outcomeNote(o)}`.trimEnd(),
    );
  }
  lines.push(`  explain: hookledger explain ${report.invocationId}`);
  return lines.join('\n');
}
