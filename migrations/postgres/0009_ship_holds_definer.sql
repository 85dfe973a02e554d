-- Custom migration: shipping legal holds without letting a machine's role see them (docs/ship.md, Security).
-- Before it, a ship role inserted holds itself (`INSERT … ON CONFLICT (session_id) DO NOTHING`), which needs
-- SELECT on legal_holds.session_id: the role could list every held session id of every source. Ship now
-- calls this function instead; it runs as its owner (the role that migrates the schema), so the least-
-- privilege role needs EXECUTE on it and no right on legal_holds at all. It takes the holds as a JSON
-- array of rows named by column (every column of legal_holds, so a column added later needs no change
-- here), adds those not held yet, and returns how many it added. It never returns a row or a session id.
CREATE OR REPLACE FUNCTION hl_ship_holds(holds jsonb) RETURNS integer LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
  added integer;
BEGIN
  INSERT INTO legal_holds SELECT * FROM jsonb_populate_recordset(NULL::legal_holds, holds) ON CONFLICT (session_id) DO NOTHING;
  GET DIAGNOSTICS added = ROW_COUNT;
  RETURN added;
END
$$;
--> statement-breakpoint
-- Only roles granted it may call it (functions are executable by PUBLIC by default); the owner always may.
REVOKE EXECUTE ON FUNCTION hl_ship_holds(jsonb) FROM PUBLIC;
--> statement-breakpoint
-- A SECURITY DEFINER function must not resolve names through the caller's search path (a caller's own
-- schema or temporary table named legal_holds): pin it to the schema the ledger was migrated into.
DO $$
BEGIN
  EXECUTE format('ALTER FUNCTION hl_ship_holds(jsonb) SET search_path = %I, pg_temp', current_schema());
END
$$;
