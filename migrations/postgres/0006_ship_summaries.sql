-- Custom migration (drizzle-kit has no triggers): ship (src/ledger/postgres/ship-sink.ts) copies thousands of
-- invocations per statement, and the row trigger of 0002 ran one summary upsert per invocation (about a
-- seventh of the centre's work per shipped invocation). A ship transaction sets
-- `hookledger.summaries = 'batch'` (SET LOCAL: its own transaction only), which this trigger skips,
-- and adds its invocations' summaries with one statement, hl_session_summaries_add, before their
-- outcomes go in (whose own trigger updates the failure counts of those summaries). Everything else
-- writes as before. The setting only chooses who keeps the cache current; any role may set it, and
-- the summaries stay a cache (a listing recomputes a stale one).
CREATE OR REPLACE FUNCTION hl_session_summaries_add(ids bigint[]) RETURNS void LANGUAGE sql AS $$
  INSERT INTO session_summaries AS s (session_id, first_seen, last_seen, last_id, invocations, denials, asks, modified, failures, timeouts)
  SELECT session_id, min(started_at), max(started_at), max(id), count(*), count(*) FILTER (WHERE decision = 'deny'),
    count(*) FILTER (WHERE decision = 'ask'), count(*) FILTER (WHERE modified_input_json IS NOT NULL), 0, 0
  FROM invocations WHERE id = ANY(ids) AND session_id IS NOT NULL
  -- One lock order for every shipper: two sources writing the same sessions at once cannot deadlock here.
  GROUP BY session_id ORDER BY session_id
  ON CONFLICT (session_id) DO UPDATE SET first_seen = least(s.first_seen, EXCLUDED.first_seen),
    last_seen = greatest(s.last_seen, EXCLUDED.last_seen), last_id = greatest(s.last_id, EXCLUDED.last_id),
    invocations = s.invocations + EXCLUDED.invocations, denials = s.denials + EXCLUDED.denials, asks = s.asks + EXCLUDED.asks,
    modified = s.modified + EXCLUDED.modified
$$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS session_summaries_insert ON invocations;
--> statement-breakpoint
CREATE TRIGGER session_summaries_insert AFTER INSERT ON invocations FOR EACH ROW
  WHEN (NEW.session_id IS NOT NULL AND current_setting('hookledger.summaries', true) IS DISTINCT FROM 'batch')
  EXECUTE FUNCTION hl_session_summaries_insert();
