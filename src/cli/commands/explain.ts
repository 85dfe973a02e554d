import { UsageError } from '../../domain/errors.js';
import { explain } from '../../ledger/queries/explain.js';
import { renderExplanation } from '../../reports/explain-text.js';
import { boolFlag, ledgerOptions, type Command } from '../command.js';
import { openLedgerFor } from '../context.js';
import { useColour, writeJson, writeReport } from '../io.js';
import { painter } from '../../reports/paint.js';

export const command: Command = {
  summary: 'why an invocation was decided as it was (by id or tool_use_id)',
  usage: `explain <INVOCATION_ID | TOOL_USE_ID> [--db PATH] [--json]

  Prints the decision, the decisive hook and its reason, the hook set, and every matched hook
  in execution order (priority, registration index, mode, capability, status, decision,
  duration, failure or skip reason), then the input as sent and as modified.`,
  options: { ...ledgerOptions },
  async run(args, io) {
    const ref = args.positionals[0];
    if (!ref) throw new UsageError('explain: give an invocation id or a tool_use_id');
    const ledger = openLedgerFor(args, io);
    try {
      const explanation = explain(ledger, ref);
      if (boolFlag(args, 'json')) writeJson(io, explanation);
      else writeReport(io, renderExplanation(explanation, painter(useColour(io))));
      return 0;
    } finally {
      ledger.close();
    }
  },
};
