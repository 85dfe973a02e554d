CREATE TABLE "ship_hook_sets" (
	"source_id" text NOT NULL,
	"local_id" bigint NOT NULL,
	"hook_set_id" bigint NOT NULL,
	CONSTRAINT "ship_hook_sets_source_id_local_id_pk" PRIMARY KEY("source_id","local_id")
);
--> statement-breakpoint
CREATE TABLE "ship_sources" (
	"id" text PRIMARY KEY NOT NULL,
	"host" text NOT NULL,
	"first_shipped_at" bigint NOT NULL,
	"last_shipped_at" bigint NOT NULL
);
--> statement-breakpoint
DROP INDEX "chain_ref";--> statement-breakpoint
ALTER TABLE "invocations" ADD COLUMN "source_ref" bigint;--> statement-breakpoint
ALTER TABLE "outcomes" ADD COLUMN "source_ref" bigint;--> statement-breakpoint
ALTER TABLE "prune_checkpoints" ADD COLUMN "source_id" text;--> statement-breakpoint
ALTER TABLE "prune_checkpoints" ADD COLUMN "source_ref" bigint;--> statement-breakpoint
ALTER TABLE "ship_hook_sets" ADD CONSTRAINT "ship_hook_sets_hook_set_id_hook_sets_id_fk" FOREIGN KEY ("hook_set_id") REFERENCES "public"."hook_sets"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "invocations_source_ref" ON "invocations" USING btree ("writer_id","source_ref") WHERE source_ref IS NOT NULL;--> statement-breakpoint
CREATE INDEX "outcomes_source_ref" ON "outcomes" USING btree ("source_ref") WHERE source_ref IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "prune_checkpoints_source_ref" ON "prune_checkpoints" USING btree ("source_id","source_ref") WHERE source_ref IS NOT NULL;--> statement-breakpoint
CREATE UNIQUE INDEX "chain_ref" ON "chain" USING btree ("kind","ref_id","writer_id");