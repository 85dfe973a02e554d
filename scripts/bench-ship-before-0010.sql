-- The central schema before migrations 0010 and 0011 (the index audit), for `npm run bench:ship -- --old-schema
-- scripts/bench-ship-before-0010.sql`: applied to a database migrated to the current schema.
CREATE INDEX "invocations_running" ON "invocations" USING btree ("status") WHERE status = 'running';
CREATE INDEX "outcomes_source_ref" ON "outcomes" USING btree ("source_ref") WHERE source_ref IS NOT NULL;
DROP INDEX "invocations_decision";
DROP INDEX "invocations_point";
CREATE INDEX "invocations_decision" ON "invocations" USING btree ("decision","id");
CREATE INDEX "invocations_point" ON "invocations" USING btree ("point","id");
DROP INDEX "invocations_tool_use_id";
CREATE INDEX "invocations_tool_use_id" ON "invocations" USING btree ("tool_use_id");
