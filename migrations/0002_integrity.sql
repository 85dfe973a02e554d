CREATE TABLE `chain` (
	`seq` integer PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`ref_id` integer NOT NULL,
	`prev_hash` text NOT NULL,
	`hash` text NOT NULL,
	`at` integer NOT NULL,
	`rows` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `chain_ref` ON `chain` (`kind`,`ref_id`);--> statement-breakpoint
CREATE TABLE `legal_holds` (
	`session_id` text PRIMARY KEY NOT NULL,
	`reason` text NOT NULL,
	`held_by` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `prune_checkpoints` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`before` integer NOT NULL,
	`invocations` integer NOT NULL,
	`outcomes` integer NOT NULL,
	`removed_json` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `outcomes` ADD `redactions_json` text;