ALTER TABLE `replay_runs` ADD `options_json` text DEFAULT '{}' NOT NULL;--> statement-breakpoint
ALTER TABLE `replay_runs` ADD `pid` integer;--> statement-breakpoint
ALTER TABLE `replay_runs` ADD `host` text;