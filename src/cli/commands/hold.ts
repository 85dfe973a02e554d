import { UsageError } from '../../domain/errors.js';
import { boolFlag, ledgerOptions, stringFlag, type Command } from '../command.js';
import { openLedgerFor } from '../context.js';
import { namingFlag } from '../flag-errors.js';
import { formatTime, table } from '../../reports/format.js';
import { writeJson, writeReport } from '../io.js';

export const command: Command = {
  summary: 'place, release or list legal holds (sessions prune must keep)',
  usage: `hold <SESSION_ID> --reason TEXT | hold --release <SESSION_ID> | hold --list   [--db PATH] [--json]

  hold S --reason "case 42"   prune keeps every invocation of session S until released
  hold --release S            releases the hold
  hold --list                 lists holds with the session's invocation count`,
  options: { ...ledgerOptions, reason: { type: 'string' }, release: { type: 'string' }, list: { type: 'boolean' } },
  async run(args, io) {
    const release = stringFlag(args, 'release');
    const list = boolFlag(args, 'list');
    const session = args.positionals[0];
    const modes = [release !== undefined, list, session !== undefined].filter(Boolean).length;
    if (modes !== 1) throw new UsageError('hold: give exactly one of <SESSION_ID> --reason TEXT, --release <SESSION_ID> or --list');
    const json = boolFlag(args, 'json');
    const ledger = await openLedgerFor(args, io);
    try {
      if (release !== undefined) {
        await ledger.releaseHold(release);
        if (json) writeJson(io, { released: release });
        else writeReport(io, `released the legal hold on session ${release}`);
      } else if (list) {
        const holds = await ledger.listHolds();
        if (json) writeJson(io, holds);
        else if (holds.length === 0) writeReport(io, 'no legal holds');
        else {
          const rows = holds.map((h) => [h.sessionId, String(h.invocations), formatTime(h.createdAt), h.heldBy, h.reason]);
          writeReport(io, table(['session', 'invocations', 'since', 'by', 'reason'], rows));
        }
      } else {
        const reason = stringFlag(args, 'reason');
        if (!reason) throw new UsageError('hold: --reason TEXT is required (why the session is held, e.g. a case number)');
        let hold;
        try {
          hold = await ledger.placeHold(session!, reason);
        } catch (error) {
          throw namingFlag(error, { reason: '--reason', sessionId: 'hold: <SESSION_ID>' });
        }
        if (json) writeJson(io, hold);
        else writeReport(io, `session ${hold.sessionId} is under legal hold (${hold.invocations} invocations): ${hold.reason}`);
      }
      return 0;
    } finally {
      await ledger.close();
    }
  },
};
