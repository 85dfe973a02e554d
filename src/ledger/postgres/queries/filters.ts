import type { InvocationFilter, SqlCondition } from '../../queries/filters.js';

/**
 * The invocation filter (ledger/queries/filters.ts) as a PostgreSQL condition over `invocations`
 * aliased `i`, with `?` placeholders (number the finished statement with `numbered`). The same
 * selection as SQLite's `orderedFilterSql`, written for PostgreSQL's planner rather than
 * SQLite's: SQLite's rewrites steer its planner (`+column` keeps a column from choosing an
 * index, a time window becomes an id range looked up first), which PostgreSQL does from its
 * statistics, and `+` is not an operator on text there. Hook-set names and fingerprints are a
 * subquery instead of ids resolved beforehand, and the agent's subagents are a prefix test
 * (`starts_with`), which does not depend on the database's collation.
 */
export function pgFilterSql(filter: InvocationFilter, extra: string[] = [], extraParams: (string | number)[] = []): SqlCondition {
  const conditions: string[] = [];
  const params: (string | number)[] = [];
  const add = (condition: string, ...values: (string | number)[]) => {
    conditions.push(condition);
    params.push(...values);
  };
  if (filter.sessionId !== undefined) add('i.session_id = ?', filter.sessionId);
  if (filter.toolName !== undefined) add('i.tool_name = ?', filter.toolName);
  if (filter.hookId !== undefined) add('i.decisive_hook_id = ?', filter.hookId);
  if (filter.reasonCode !== undefined) add('i.reason_code = ?', filter.reasonCode);
  if (filter.point !== undefined) add('i.point = ?', filter.point);
  if (filter.decision !== undefined) add('i.decision = ?', filter.decision);
  if (filter.agent !== undefined) add('(i.agent = ? OR starts_with(i.agent, ?))', filter.agent, `${filter.agent}/`);
  if (filter.host !== undefined) add('i.host = ?', filter.host);
  if (filter.hookSet !== undefined) {
    const prefix = filter.hookSet.toLowerCase();
    if (/^[0-9a-f]{6,64}$/.test(prefix)) {
      add('i.hook_set_id IN (SELECT id FROM hook_sets WHERE name = ? OR starts_with(fingerprint, ?))', filter.hookSet, prefix);
    } else add('i.hook_set_id IN (SELECT id FROM hook_sets WHERE name = ?)', filter.hookSet);
  }
  if (filter.since !== undefined) add('i.started_at >= ?', filter.since);
  if (filter.until !== undefined) add('i.started_at < ?', filter.until);
  conditions.push(...extra);
  params.push(...extraParams);
  return { where: conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '', params };
}
