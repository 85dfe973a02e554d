DROP INDEX "outcomes_health";--> statement-breakpoint
CREATE INDEX "outcomes_health" ON "outcomes" USING btree ("hook_id","started_at","duration_us");