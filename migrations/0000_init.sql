CREATE TABLE `hook_sets` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`fingerprint` text NOT NULL,
	`name` text NOT NULL,
	`version` text NOT NULL,
	`strategy` text NOT NULL,
	`definition_json` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `hook_sets_fingerprint` ON `hook_sets` (`fingerprint`);--> statement-breakpoint
CREATE TABLE `invocations` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hook_set_id` integer NOT NULL,
	`point` text NOT NULL,
	`event_name` text,
	`session_id` text,
	`turn` integer,
	`tool_name` text,
	`tool_use_id` text,
	`agent` text,
	`cwd` text,
	`input_json` text,
	`invocation_json` text NOT NULL,
	`raw_json` text,
	`modified_input_json` text,
	`status` text NOT NULL,
	`decision` text,
	`decisive_hook_id` text,
	`reason_code` text,
	`message` text,
	`context_json` text,
	`redactions_json` text,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`duration_us` integer,
	`pid` integer NOT NULL,
	`host` text NOT NULL,
	FOREIGN KEY (`hook_set_id`) REFERENCES `hook_sets`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `invocations_tool_use_id` ON `invocations` (`tool_use_id`);--> statement-breakpoint
CREATE INDEX `invocations_session` ON `invocations` (`session_id`,`id`);--> statement-breakpoint
CREATE INDEX `invocations_decision` ON `invocations` (`decision`,`id`);--> statement-breakpoint
CREATE INDEX `invocations_started_at` ON `invocations` (`started_at`);--> statement-breakpoint
CREATE INDEX `invocations_running` ON `invocations` (`status`) WHERE status = 'running';--> statement-breakpoint
CREATE TABLE `outcomes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`invocation_id` integer NOT NULL,
	`hook_id` text NOT NULL,
	`point` text NOT NULL,
	`priority` integer NOT NULL,
	`registration_index` integer NOT NULL,
	`execution_order` integer,
	`mode` text NOT NULL,
	`capability` text NOT NULL,
	`runtime` text NOT NULL,
	`status` text NOT NULL,
	`decision` text,
	`decisive` integer NOT NULL,
	`reason_code` text,
	`message` text,
	`payload_json` text,
	`modified_input_json` text,
	`additional_context` text,
	`failure_reason` text,
	`failure_detail` text,
	`skip_reason` text,
	`skipped_by` text,
	`timeout_ms` integer NOT NULL,
	`started_at` integer,
	`duration_us` integer,
	FOREIGN KEY (`invocation_id`) REFERENCES `invocations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `outcomes_invocation` ON `outcomes` (`invocation_id`);--> statement-breakpoint
CREATE INDEX `outcomes_hook` ON `outcomes` (`hook_id`,`started_at`);--> statement-breakpoint
CREATE INDEX `outcomes_pending` ON `outcomes` (`status`) WHERE status = 'pending';--> statement-breakpoint
CREATE TABLE `replay_results` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`run_id` integer NOT NULL,
	`invocation_id` integer NOT NULL,
	`change` text NOT NULL,
	`old_decision` text,
	`new_decision` text,
	`old_decisive_hook_id` text,
	`new_decisive_hook_id` text,
	`detail_json` text NOT NULL,
	`baseline_mismatch` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`run_id`) REFERENCES `replay_runs`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `replay_results_run` ON `replay_results` (`run_id`,`change`);--> statement-breakpoint
CREATE TABLE `replay_runs` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`hook_set_id` integer NOT NULL,
	`baseline_hook_set_id` integer,
	`filter_json` text NOT NULL,
	`status` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`totals_json` text NOT NULL,
	FOREIGN KEY (`hook_set_id`) REFERENCES `hook_sets`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`baseline_hook_set_id`) REFERENCES `hook_sets`(`id`) ON UPDATE no action ON DELETE no action
);
