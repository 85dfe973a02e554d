import { renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderAuditReport } from '../../console/audit-report.js';
import { describeThrown, InputError, UsageError } from '../../domain/errors.js';
import { parseNamedTimeBound } from '../../domain/time.js';
import { readAnchor } from '../../ledger/verify.js';
import { boolFlag, ledgerOptions, stringFlag, type Command } from '../command.js';
import { openLedgerFor } from '../context.js';

const DEFAULT_PERIOD_MS = 30 * 86_400_000;

export const command: Command = {
  summary: 'a self-contained HTML audit report for a period (sessions, denials, failures, hook sets, replays, verify)',
  usage: `report --out FILE [--since WHEN] [--until WHEN] [--anchor FILE] [--db PATH|URL] [--json]

  Writes one HTML file with no external resource (styles inlined, no script), printable to
  PDF: the period's sessions, denials by hook and by reason, hook failures and timeouts,
  the hook-set versions in force, replay runs, and the verify result with the chain head.
  --since WHEN   from (inclusive): an ISO date/time, or an age like 7d (default: 30 days before --until)
  --until WHEN   before (exclusive), default now
  --anchor FILE  check the chain against a verify --anchor file
  Exit code 5 when verify finds the ledger not intact (the report is still written and says so).`,
  options: {
    ...ledgerOptions,
    out: { type: 'string', short: 'o' },
    since: { type: 'string' },
    until: { type: 'string' },
    anchor: { type: 'string' },
  },
  async run(args, io) {
    const out = stringFlag(args, 'out');
    if (!out) throw new UsageError('--out FILE is required (where to write the HTML report)');
    const now = Date.now();
    const untilText = stringFlag(args, 'until');
    const sinceText = stringFlag(args, 'since');
    const until = untilText !== undefined ? parseNamedTimeBound('--until', untilText, now) : now;
    const since = sinceText !== undefined ? parseNamedTimeBound('--since', sinceText, now) : until - DEFAULT_PERIOD_MS;
    if (since >= until)
      throw new InputError(`--since: ${sinceText ?? 'the default'} is not before --until ${untilText ?? 'now'}: the period is empty`);
    const anchorFile = stringFlag(args, 'anchor');
    const anchor = anchorFile ? readAnchor(resolve(anchorFile)) : undefined;
    const ledger = await openLedgerFor(args, io, { readonly: true });
    try {
      const verify = await ledger.verify(anchor ? { anchor } : {});
      const text = await renderAuditReport(ledger, { since, until, verify, generatedAt: now });
      const file = resolve(out);
      const tmp = `${file}.${process.pid}.tmp`;
      try {
        writeFileSync(tmp, text);
        renameSync(tmp, file);
      } catch (error) {
        throw new UsageError(`--out: cannot write ${file}: ${describeThrown(error)}`);
      }
      if (boolFlag(args, 'json'))
        io.stdout.write(`${JSON.stringify({ out: file, bytes: Buffer.byteLength(text), since, until, intact: verify.ok })}\n`);
      else
        io.stdout.write(
          `wrote ${file} (${Buffer.byteLength(text).toLocaleString('en-US')} bytes; ledger ${verify.ok ? 'intact' : 'NOT intact'})\n`,
        );
      return verify.ok ? 0 : 5;
    } finally {
      await ledger.close();
    }
  },
};
