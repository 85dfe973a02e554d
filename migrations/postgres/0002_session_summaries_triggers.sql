-- Custom migration (drizzle-kit has no triggers): keep session_summaries current as records
-- commit, as the SQLite triggers of migrations/0005 do, so that the sessions list's first page
-- reads the newest summaries instead of aggregating the ledger. Each trigger touches the one
-- session of the row it fires for; a deletion or re-keying marks sessions stale and the next
-- listing recomputes them (src/ledger/postgres/queries/sessions.ts). Re-runnable (OR REPLACE, DROP IF
-- EXISTS), so a database whose migration record was lost is brought up to date too.
CREATE OR REPLACE FUNCTION hl_session_summaries_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO session_summaries AS s (session_id, first_seen, last_seen, last_id, invocations, denials, asks, modified, failures, timeouts)
  VALUES (NEW.session_id, NEW.started_at, NEW.started_at, NEW.id, 1, (NEW.decision IS NOT DISTINCT FROM 'deny')::int,
    (NEW.decision IS NOT DISTINCT FROM 'ask')::int, (NEW.modified_input_json IS NOT NULL)::int, 0, 0)
  ON CONFLICT (session_id) DO UPDATE SET first_seen = least(s.first_seen, EXCLUDED.first_seen),
    last_seen = greatest(s.last_seen, EXCLUDED.last_seen), last_id = greatest(s.last_id, EXCLUDED.last_id),
    invocations = s.invocations + 1, denials = s.denials + EXCLUDED.denials, asks = s.asks + EXCLUDED.asks,
    modified = s.modified + EXCLUDED.modified;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS session_summaries_insert ON invocations;
CREATE TRIGGER session_summaries_insert AFTER INSERT ON invocations FOR EACH ROW WHEN (NEW.session_id IS NOT NULL)
  EXECUTE FUNCTION hl_session_summaries_insert();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION hl_session_summaries_decide() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE session_summaries SET
    denials = denials + (NEW.decision IS NOT DISTINCT FROM 'deny')::int - (OLD.decision IS NOT DISTINCT FROM 'deny')::int,
    asks = asks + (NEW.decision IS NOT DISTINCT FROM 'ask')::int - (OLD.decision IS NOT DISTINCT FROM 'ask')::int,
    modified = modified + (NEW.modified_input_json IS NOT NULL)::int - (OLD.modified_input_json IS NOT NULL)::int
  WHERE session_id = NEW.session_id;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS session_summaries_decide ON invocations;
CREATE TRIGGER session_summaries_decide AFTER UPDATE OF decision, modified_input_json ON invocations FOR EACH ROW
  -- Only when a count changes: most invocations go from no decision to allow, which counts nowhere.
  WHEN (NEW.session_id IS NOT NULL AND ((OLD.decision IS DISTINCT FROM NEW.decision
      AND (coalesce(OLD.decision IN ('deny', 'ask'), false) OR coalesce(NEW.decision IN ('deny', 'ask'), false)))
    OR (OLD.modified_input_json IS NULL) <> (NEW.modified_input_json IS NULL)))
  EXECUTE FUNCTION hl_session_summaries_decide();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION hl_session_summaries_rekey() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE session_summaries SET stale = 1 WHERE session_id IN (OLD.session_id, NEW.session_id);
  IF NEW.session_id IS NOT NULL THEN
    INSERT INTO session_summaries (session_id, first_seen, last_seen, last_id, invocations, denials, asks, modified, failures, timeouts, stale)
    VALUES (NEW.session_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1) ON CONFLICT (session_id) DO NOTHING;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS session_summaries_rekey ON invocations;
CREATE TRIGGER session_summaries_rekey AFTER UPDATE OF session_id, started_at, id ON invocations FOR EACH ROW
  WHEN (OLD.session_id IS DISTINCT FROM NEW.session_id OR OLD.started_at IS DISTINCT FROM NEW.started_at OR OLD.id IS DISTINCT FROM NEW.id)
  EXECUTE FUNCTION hl_session_summaries_rekey();
--> statement-breakpoint
-- Deletions (prune) mark each touched session once per statement, not once per row.
CREATE OR REPLACE FUNCTION hl_session_summaries_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE session_summaries SET stale = 1 WHERE stale = 0 AND session_id IN (SELECT DISTINCT session_id FROM gone WHERE session_id IS NOT NULL);
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS session_summaries_delete ON invocations;
CREATE TRIGGER session_summaries_delete AFTER DELETE ON invocations REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
  EXECUTE FUNCTION hl_session_summaries_delete();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION hl_session_summaries_outcome_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE session_summaries SET failures = failures + (NEW.status = 'failed')::int, timeouts = timeouts + (NEW.status = 'timed_out')::int
  WHERE session_id = (SELECT session_id FROM invocations WHERE id = NEW.invocation_id);
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS session_summaries_outcome_insert ON outcomes;
CREATE TRIGGER session_summaries_outcome_insert AFTER INSERT ON outcomes FOR EACH ROW WHEN (NEW.status IN ('failed', 'timed_out'))
  EXECUTE FUNCTION hl_session_summaries_outcome_insert();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION hl_session_summaries_outcome_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.invocation_id IS NOT DISTINCT FROM NEW.invocation_id THEN
    UPDATE session_summaries SET
      failures = failures + (NEW.status IS NOT DISTINCT FROM 'failed')::int - (OLD.status IS NOT DISTINCT FROM 'failed')::int,
      timeouts = timeouts + (NEW.status IS NOT DISTINCT FROM 'timed_out')::int - (OLD.status IS NOT DISTINCT FROM 'timed_out')::int
    WHERE session_id = (SELECT session_id FROM invocations WHERE id = NEW.invocation_id);
  ELSE
    UPDATE session_summaries SET stale = 1
    WHERE session_id IN (SELECT session_id FROM invocations WHERE id IN (OLD.invocation_id, NEW.invocation_id));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS session_summaries_outcome_update ON outcomes;
CREATE TRIGGER session_summaries_outcome_update AFTER UPDATE OF status, invocation_id ON outcomes FOR EACH ROW
  WHEN (OLD.invocation_id IS DISTINCT FROM NEW.invocation_id OR (OLD.status IS DISTINCT FROM NEW.status
    AND (OLD.status IN ('failed', 'timed_out') OR NEW.status IN ('failed', 'timed_out'))))
  EXECUTE FUNCTION hl_session_summaries_outcome_update();
--> statement-breakpoint
CREATE OR REPLACE FUNCTION hl_session_summaries_outcome_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE session_summaries SET stale = 1 WHERE stale = 0 AND session_id IN (
    SELECT DISTINCT i.session_id FROM gone o JOIN invocations i ON i.id = o.invocation_id
    WHERE o.status IN ('failed', 'timed_out') AND i.session_id IS NOT NULL);
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS session_summaries_outcome_delete ON outcomes;
CREATE TRIGGER session_summaries_outcome_delete AFTER DELETE ON outcomes REFERENCING OLD TABLE AS gone FOR EACH STATEMENT
  EXECUTE FUNCTION hl_session_summaries_outcome_delete();
--> statement-breakpoint
-- The summaries of what the ledger already holds (a ledger written before this migration).
INSERT INTO session_summaries (session_id, first_seen, last_seen, last_id, invocations, denials, asks, modified, failures, timeouts)
SELECT session_id, min(started_at), max(started_at), max(id), count(*), count(*) FILTER (WHERE decision = 'deny'),
  count(*) FILTER (WHERE decision = 'ask'), count(*) FILTER (WHERE modified_input_json IS NOT NULL), 0, 0
FROM invocations WHERE session_id IS NOT NULL GROUP BY session_id
ON CONFLICT (session_id) DO NOTHING;
--> statement-breakpoint
UPDATE session_summaries s SET failures = f.failures, timeouts = f.timeouts
FROM (SELECT i.session_id, count(*) FILTER (WHERE o.status = 'failed') AS failures, count(*) FILTER (WHERE o.status = 'timed_out') AS timeouts
      FROM outcomes o JOIN invocations i ON i.id = o.invocation_id
      WHERE o.status IN ('failed', 'timed_out') AND i.session_id IS NOT NULL GROUP BY i.session_id) AS f
WHERE f.session_id = s.session_id;
