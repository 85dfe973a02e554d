import { InputError } from '../../domain/errors.js';
import { DENIAL_GROUPS, type DenialGroupBy } from '../../ledger/queries/denials.js';
import { renderDenialGroups, renderDenials } from '../../reports/denials-text.js';
import { boolFlag, ledgerOptions, stringFlag, type Command } from '../command.js';
import { openLedgerFor } from '../context.js';
import { filterFromFlags, filterOptions, FILTER_USAGE, pageFromFlags, pageOptions } from '../filter-flags.js';
import { useColour, writeJson, writeReport } from '../io.js';
import { painter } from '../../reports/paint.js';

const { decision: _decision, ...denialFilterOptions } = filterOptions;

export const command: Command = {
  summary: 'denied invocations, newest first, filtered, paged or grouped',
  usage: `denials [filters] [--limit N] [--cursor C | --offset N] [--group-by KEY] [--db PATH] [--json]

  Lists denied invocations, newest first: the id to pass to \`hookledger explain\`, when,
  the session, the tool, the decisive hook, and its reason code and message.
${FILTER_USAGE}
  --limit N            rows per page (default 50); with --group-by, groups shown
  --cursor C           the next page: the cursor printed under the previous page
                       (stable while the ledger is written)
  --offset N           skip N rows instead (shifts when new denials arrive)
  --group-by KEY       count denials by ${DENIAL_GROUPS.join(', ')} (day: UTC days)
  --json               {"rows": [...], "nextCursor": ...} or, grouped,
                       {"groupBy", "total", "totalGroups", "groups": [...]}`,
  options: { ...ledgerOptions, ...denialFilterOptions, ...pageOptions, 'group-by': { type: 'string' } },
  async run(args, io) {
    const filter = filterFromFlags(args, {
      allow: ['session', 'tool', 'hook', 'reason-code', 'point', 'hook-set', 'agent', 'host', 'source', 'since', 'until'],
    });
    const page = pageFromFlags(args, 50);
    const groupBy = stringFlag(args, 'group-by');
    if (groupBy !== undefined && !(DENIAL_GROUPS as readonly string[]).includes(groupBy)) {
      throw new InputError(`--group-by: "${groupBy}" is not a grouping (expected one of ${DENIAL_GROUPS.join(', ')})`);
    }
    const ledger = await openLedgerFor(args, io);
    try {
      const paint = painter(useColour(io));
      if (groupBy !== undefined) {
        if (page.cursor !== null || page.offset > 0) throw new InputError('--group-by: groups are not paged; use --limit');
        const groups = await ledger.groupDenials(filter, groupBy as DenialGroupBy, { limit: page.limit });
        if (boolFlag(args, 'json')) writeJson(io, groups);
        else writeReport(io, renderDenialGroups(groups, paint));
        return 0;
      }
      const result = await ledger.listDenials(filter, page);
      if (boolFlag(args, 'json')) writeJson(io, result);
      else writeReport(io, renderDenials(result, paint));
      return 0;
    } finally {
      await ledger.close();
    }
  },
};
