import { listSessions, sessionTimeline } from '../../ledger/queries/sessions.js';
import { renderSessions, renderTimeline } from '../../reports/sessions-text.js';
import { UsageError } from '../../domain/errors.js';
import { boolFlag, ledgerOptions, stringFlag, type Command } from '../command.js';
import { openLedgerFor } from '../context.js';
import { filterFromFlags, filterOptions, FILTER_USAGE, DECISION_USAGE, pageFromFlags, pageOptions } from '../filter-flags.js';
import { useColour, writeJson, writeReport } from '../io.js';
import { painter } from '../../reports/paint.js';

export const command: Command = {
  summary: 'sessions with their counts, or one session as a timeline',
  usage: `sessions [filters] [--limit N] [--cursor C] [--db PATH] [--json]
       sessions SESSION_ID [filters] [--limit N] [--cursor C] [--db PATH] [--json]

  Without an id: sessions, most recently active first, with first and last seen,
  events, denials, hook failures and timeouts (counted over the invocations the
  filters select).
  With an id: the session as a timeline in recorded order: each event, its decision,
  the decisive hook, and * where a hook modified the input.
${FILTER_USAGE}
${DECISION_USAGE}
  (--session does not apply: give the id as SESSION_ID)
  --limit N            sessions (default 50) or events (default 1000) per page
  --cursor C           the next page, from the line under the previous one
  --offset N           skip N instead (not stable while the ledger is written)
  --json               {"rows": [...], "nextCursor"} or {"session", "events", "nextCursor"}`,
  options: { ...ledgerOptions, ...filterOptions, ...pageOptions },
  async run(args, io) {
    const sessionId = args.positionals[0];
    // A session filter on the list would show one row, and beside an id it would be a second,
    // possibly different id: either way the id belongs in the position.
    if (stringFlag(args, 'session') !== undefined) {
      throw new UsageError('sessions: --session does not apply here; for one session use hookledger sessions SESSION_ID');
    }
    const filter = filterFromFlags(args);
    const page = pageFromFlags(args, sessionId === undefined ? 50 : 1000);
    const ledger = openLedgerFor(args, io);
    try {
      const paint = painter(useColour(io));
      if (sessionId === undefined) {
        const result = listSessions(ledger, filter, page);
        if (boolFlag(args, 'json')) writeJson(io, result);
        else writeReport(io, renderSessions(result, paint));
      } else {
        const timeline = sessionTimeline(ledger, sessionId, page, filter);
        if (boolFlag(args, 'json')) writeJson(io, timeline);
        else writeReport(io, renderTimeline(timeline, paint));
      }
      return 0;
    } finally {
      ledger.close();
    }
  },
};
