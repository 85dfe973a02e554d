CREATE TABLE "session_summaries" (
	"session_id" text PRIMARY KEY NOT NULL,
	"first_seen" bigint NOT NULL,
	"last_seen" bigint NOT NULL,
	"last_id" bigint NOT NULL,
	"invocations" bigint NOT NULL,
	"denials" bigint NOT NULL,
	"asks" bigint NOT NULL,
	"modified" bigint NOT NULL,
	"failures" bigint NOT NULL,
	"timeouts" bigint NOT NULL,
	"stale" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX "session_summaries_last_id" ON "session_summaries" USING btree ("last_id");--> statement-breakpoint
CREATE INDEX "session_summaries_stale" ON "session_summaries" USING btree ("session_id") WHERE stale = 1;