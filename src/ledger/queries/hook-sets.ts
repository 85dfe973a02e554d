import type { Ledger } from '../open.js';
import { prepared } from '../statements.js';

/** A hook set that decided invocations in a period: which version was in force, and when. */
export interface HookSetInForce {
  id: number;
  name: string;
  version: string;
  fingerprint: string;
  strategy: string;
  invocations: number;
  /** ms since the epoch of its first and last invocation in the period. */
  firstAt: number;
  lastAt: number;
}

/**
 * The query, with `?` for [since, until). Standard SQL both engines run as it is (PostgreSQL with
 * `$1`, `$2`: postgres/queries/hook-sets.ts); the camel-case aliases are quoted so that
 * PostgreSQL keeps their case.
 */
export const HOOK_SETS_IN_FORCE_SQL = `SELECT h.id, h.name, h.version, h.fingerprint, h.strategy, s.invocations, s."firstAt", s."lastAt"
     FROM (SELECT hook_set_id, count(*) AS invocations, min(started_at) AS "firstAt", max(started_at) AS "lastAt"
           FROM invocations WHERE started_at >= ? AND started_at < ? GROUP BY hook_set_id) s
     JOIN hook_sets h ON h.id = s.hook_set_id ORDER BY s."firstAt", h.id`;

/** The hook sets that decided the invocations started in [since, until), in order of first use. */
export function hookSetsInForce(ledger: Ledger, since: number, until: number): HookSetInForce[] {
  return prepared<[number, number], HookSetInForce>(ledger, HOOK_SETS_IN_FORCE_SQL).all(since, until);
}
