CREATE TABLE `session_summaries` (
	`session_id` text PRIMARY KEY NOT NULL,
	`first_seen` integer NOT NULL,
	`last_seen` integer NOT NULL,
	`last_id` integer NOT NULL,
	`invocations` integer NOT NULL,
	`denials` integer NOT NULL,
	`asks` integer NOT NULL,
	`modified` integer NOT NULL,
	`failures` integer NOT NULL,
	`timeouts` integer NOT NULL,
	`stale` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `session_summaries_last_id` ON `session_summaries` (`last_id`);--> statement-breakpoint
CREATE INDEX `session_summaries_stale` ON `session_summaries` (`session_id`) WHERE stale = 1;--> statement-breakpoint
-- Hand-written below (drizzle-kit has no triggers): the triggers that keep session_summaries
-- current as records commit, then the summaries of what the ledger already holds.
CREATE TRIGGER `session_summaries_insert` AFTER INSERT ON `invocations` WHEN new.session_id IS NOT NULL BEGIN
  INSERT INTO session_summaries (session_id, first_seen, last_seen, last_id, invocations, denials, asks, modified, failures, timeouts)
  VALUES (new.session_id, new.started_at, new.started_at, new.id, 1, new.decision IS 'deny', new.decision IS 'ask', new.modified_input_json IS NOT NULL, 0, 0)
  ON CONFLICT (session_id) DO UPDATE SET first_seen = min(first_seen, excluded.first_seen), last_seen = max(last_seen, excluded.last_seen),
    last_id = max(last_id, excluded.last_id), invocations = invocations + 1, denials = denials + excluded.denials,
    asks = asks + excluded.asks, modified = modified + excluded.modified;
END;
--> statement-breakpoint
CREATE TRIGGER `session_summaries_decide` AFTER UPDATE OF decision, modified_input_json ON `invocations`
WHEN new.session_id IS NOT NULL AND (old.decision IS NOT new.decision OR (old.modified_input_json IS NULL) != (new.modified_input_json IS NULL)) BEGIN
  UPDATE session_summaries SET denials = denials + (new.decision IS 'deny') - (old.decision IS 'deny'),
    asks = asks + (new.decision IS 'ask') - (old.decision IS 'ask'),
    modified = modified + (new.modified_input_json IS NOT NULL) - (old.modified_input_json IS NOT NULL)
  WHERE session_id = new.session_id;
END;
--> statement-breakpoint
CREATE TRIGGER `session_summaries_rekey` AFTER UPDATE OF session_id, started_at, id ON `invocations`
WHEN old.session_id IS NOT new.session_id OR old.started_at IS NOT new.started_at OR old.id IS NOT new.id BEGIN
  UPDATE session_summaries SET stale = 1 WHERE session_id IN (old.session_id, new.session_id);
  INSERT OR IGNORE INTO session_summaries (session_id, first_seen, last_seen, last_id, invocations, denials, asks, modified, failures, timeouts, stale)
  SELECT new.session_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 WHERE new.session_id IS NOT NULL;
END;
--> statement-breakpoint
CREATE TRIGGER `session_summaries_delete` AFTER DELETE ON `invocations` WHEN old.session_id IS NOT NULL BEGIN
  UPDATE session_summaries SET stale = 1 WHERE session_id = old.session_id;
END;
--> statement-breakpoint
CREATE TRIGGER `session_summaries_outcome_insert` AFTER INSERT ON `outcomes` WHEN new.status IN ('failed', 'timed_out') BEGIN
  UPDATE session_summaries SET failures = failures + (new.status = 'failed'), timeouts = timeouts + (new.status = 'timed_out')
  WHERE session_id = (SELECT session_id FROM invocations WHERE id = new.invocation_id);
END;
--> statement-breakpoint
CREATE TRIGGER `session_summaries_outcome_update` AFTER UPDATE OF status, invocation_id ON `outcomes`
WHEN old.invocation_id IS NOT new.invocation_id OR (old.status IS NOT new.status AND (old.status IN ('failed', 'timed_out') OR new.status IN ('failed', 'timed_out'))) BEGIN
  UPDATE session_summaries SET failures = failures + (new.status IS 'failed') - (old.status IS 'failed'),
    timeouts = timeouts + (new.status IS 'timed_out') - (old.status IS 'timed_out')
  WHERE old.invocation_id IS new.invocation_id AND session_id = (SELECT session_id FROM invocations WHERE id = new.invocation_id);
  UPDATE session_summaries SET stale = 1 WHERE old.invocation_id IS NOT new.invocation_id
    AND session_id IN (SELECT session_id FROM invocations WHERE id IN (old.invocation_id, new.invocation_id));
END;
--> statement-breakpoint
CREATE TRIGGER `session_summaries_outcome_delete` AFTER DELETE ON `outcomes` WHEN old.status IN ('failed', 'timed_out') BEGIN
  UPDATE session_summaries SET stale = 1 WHERE session_id = (SELECT session_id FROM invocations WHERE id = old.invocation_id);
END;
--> statement-breakpoint
INSERT INTO session_summaries (session_id, first_seen, last_seen, last_id, invocations, denials, asks, modified, failures, timeouts)
SELECT session_id, min(started_at), max(started_at), max(id), count(*), sum(decision IS 'deny'), sum(decision IS 'ask'),
  sum(modified_input_json IS NOT NULL), 0, 0
FROM invocations WHERE session_id IS NOT NULL GROUP BY session_id;
--> statement-breakpoint
UPDATE session_summaries SET failures = f.failures, timeouts = f.timeouts
FROM (SELECT i.session_id, sum(o.status = 'failed') AS failures, sum(o.status = 'timed_out') AS timeouts
      FROM outcomes o JOIN invocations i ON i.id = o.invocation_id
      WHERE o.status IN ('failed', 'timed_out') AND i.session_id IS NOT NULL GROUP BY i.session_id) AS f
WHERE f.session_id = session_summaries.session_id;
