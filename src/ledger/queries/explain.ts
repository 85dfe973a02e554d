import { NotFoundError } from '../../domain/errors.js';
import type { Outcome } from '../../domain/outcomes.js';
import { fromJsonText } from '../json-text.js';
import type { Ledger } from '../open.js';
import {
  invocationSummaryFromRow,
  OUTCOME_ORDER,
  outcomeFromRow,
  type InvocationRow,
  type InvocationSummary,
  type OutcomeRow,
} from '../rows.js';
import { prepared } from '../statements.js';

/** Everything docs/design.md §6 lists for explain, read from the ledger alone. */
export interface Explanation {
  invocation: InvocationSummary;
  hookSet: { id: number; name: string; version: string; fingerprint: string; strategy: string };
  /** The decisive hook's outcome, when a hook decided. */
  decisive: Outcome | null;
  /** Every matched hook, in execution order. */
  outcomes: Outcome[];
  /** The modifiable input as the agent sent it (tool input, or the prompt). */
  input: unknown;
  /** The input as hooks left it, or null when unchanged. */
  modifiedInput: unknown;
  additionalContext: string[];
  /** Field paths that redaction replaced before storage. */
  redactions: string[];
  /** The agent's own payload, verbatim. */
  raw: unknown;
  /** Other invocations with the same tool_use_id (e.g. the PostToolUse of a PreToolUse). */
  related: { id: number; point: string; decision: string | null }[];
  /**
   * Where the record came from, on a central (PostgreSQL) ledger only: a SQLite ledger is one
   * machine's own record, so it has no such field (docs/ship.md).
   */
  origin?: ExplanationOrigin;
}

/**
 * Where a record on a central ledger came from: shipped from a machine's SQLite ledger (its
 * source id, host and the invocation's id in that ledger), or written directly by a PostgreSQL
 * writer (`run`, `claude`, `serve` with a `postgres://` ledger).
 */
export type ExplanationOrigin =
  { kind: 'shipped'; source: string; host: string; sourceRef: number } | { kind: 'direct'; writer: string | null; host: string };

/**
 * Explains one invocation, by ledger id or by tool_use_id. A tool_use_id is shared by a
 * tool call's pre and post events (and Claude Code may fire an event twice), so it resolves
 * to the most recent pre_tool_use for it, else the most recent invocation.
 */
export function explain(ledger: Ledger, ref: number | string): Explanation {
  const row = findInvocation(ledger, ref);
  if (!row) {
    throw new NotFoundError(`no invocation with id or tool_use_id "${ref}" in ${ledger.path}`);
  }
  const hookSet = prepared<[number], Explanation['hookSet']>(
    ledger,
    'SELECT id, name, version, fingerprint, strategy FROM hook_sets WHERE id = ?',
  ).get(row.hook_set_id)!;
  const outcomes = prepared<[number], OutcomeRow>(ledger, `SELECT * FROM outcomes WHERE invocation_id = ? ORDER BY ${OUTCOME_ORDER}`).all(
    row.id,
  );
  const related = row.tool_use_id
    ? prepared<[string, number], Explanation['related'][number]>(
        ledger,
        'SELECT id, point, decision FROM invocations WHERE tool_use_id = ? AND id != ? ORDER BY id',
      ).all(row.tool_use_id, row.id)
    : [];
  return explanationFrom(row, hookSet, outcomes, related);
}

/** The explanation from the rows read (shared by both engines; PostgreSQL's queries live in ledger/postgres/). */
export function explanationFrom(
  row: InvocationRow,
  hookSet: Explanation['hookSet'],
  outcomeRows: OutcomeRow[],
  related: Explanation['related'],
): Explanation {
  const outcomes = outcomeRows.map(outcomeFromRow);
  return {
    invocation: invocationSummaryFromRow(row),
    hookSet,
    decisive: outcomes.find((o) => o.decisive) ?? null,
    outcomes,
    input: fromJsonText(row.input_json),
    modifiedInput: fromJsonText(row.modified_input_json),
    additionalContext: (fromJsonText(row.context_json) as string[] | null) ?? [],
    redactions: (fromJsonText(row.redactions_json) as string[] | null) ?? [],
    raw: fromJsonText(row.raw_json),
    related,
  };
}

function findInvocation(ledger: Ledger, ref: number | string): InvocationRow | undefined {
  const byId = prepared<[number], InvocationRow>(ledger, 'SELECT * FROM invocations WHERE id = ?');
  if (typeof ref === 'number') return byId.get(ref);
  if (/^\d+$/.test(ref)) {
    const row = byId.get(Number(ref));
    if (row) return row;
  }
  return prepared<[string], InvocationRow>(
    ledger,
    `SELECT * FROM invocations WHERE tool_use_id = ? ORDER BY point = 'pre_tool_use' DESC, id DESC LIMIT 1`,
  ).get(ref);
}
