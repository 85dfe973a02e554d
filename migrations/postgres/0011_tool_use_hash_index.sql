-- Explain's tool-use id lookups are equalities: a hash index serves them at about half a b-tree's cost per inserted
-- invocation (tool-use ids are random text; docs/postgres.md "Indexes"). Rebuilds the index once on an existing centre.
DROP INDEX IF EXISTS "invocations_tool_use_id";--> statement-breakpoint
CREATE INDEX "invocations_tool_use_id" ON "invocations" USING hash ("tool_use_id");