-- The centre's index audit (issue 13, docs/postgres.md "Indexes"): indexes no PostgreSQL query needs go, and two whose
-- common values a primary-key walk serves as well become partial, so that each shipped invocation and outcome
-- maintains fewer index entries. On an existing centre this rebuilds two indexes of `invocations` once.
DROP INDEX IF EXISTS "invocations_running";--> statement-breakpoint
DROP INDEX IF EXISTS "outcomes_source_ref";--> statement-breakpoint
DROP INDEX IF EXISTS "invocations_decision";--> statement-breakpoint
DROP INDEX IF EXISTS "invocations_point";--> statement-breakpoint
CREATE INDEX "invocations_decision" ON "invocations" USING btree ("decision","id") WHERE decision <> 'none';--> statement-breakpoint
CREATE INDEX "invocations_point" ON "invocations" USING btree ("point","id") WHERE point <> 'pre_tool_use' AND point <> 'post_tool_use';