CREATE TABLE `health_rollup_hours` (
	`hour` integer PRIMARY KEY NOT NULL,
	`built_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `health_rollup_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`last_invocation_id` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `health_rollups` (
	`hour` integer NOT NULL,
	`hook_id` text NOT NULL,
	`runs` integer NOT NULL,
	`allows` integer NOT NULL,
	`denials` integer NOT NULL,
	`asks` integer NOT NULL,
	`modifies` integer NOT NULL,
	`decisive` integer NOT NULL,
	`failures` integer NOT NULL,
	`timeouts` integer NOT NULL,
	`observe_only_violations` integer NOT NULL,
	`skips` integer NOT NULL,
	`interrupted` integer NOT NULL,
	`timed` integer NOT NULL,
	`max_us` integer,
	`histogram` blob NOT NULL,
	PRIMARY KEY(`hour`, `hook_id`)
);
--> statement-breakpoint
CREATE INDEX `invocations_deny_started_at` ON `invocations` (`started_at`,`id`) WHERE decision = 'deny';