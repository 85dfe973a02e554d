DROP INDEX `outcomes_hook`;--> statement-breakpoint
CREATE INDEX `outcomes_health` ON `outcomes` (`hook_id`,`duration_us`,`started_at`,`status`,`decision`,`failure_reason`,`decisive`);--> statement-breakpoint
CREATE INDEX `outcomes_skipped` ON `outcomes` (`hook_id`,`invocation_id`) WHERE status = 'skipped';--> statement-breakpoint
CREATE INDEX `invocations_tool` ON `invocations` (`tool_name`,`id`);--> statement-breakpoint
CREATE INDEX `invocations_point` ON `invocations` (`point`,`id`);--> statement-breakpoint
CREATE INDEX `invocations_hook_set` ON `invocations` (`hook_set_id`,`id`);--> statement-breakpoint
CREATE INDEX `invocations_decisive_hook` ON `invocations` (`decisive_hook_id`,`id`) WHERE decisive_hook_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `invocations_reason` ON `invocations` (`reason_code`,`id`) WHERE reason_code IS NOT NULL;--> statement-breakpoint
CREATE INDEX `invocations_deny_tool` ON `invocations` (`tool_name`,`id`) WHERE decision = 'deny';--> statement-breakpoint
CREATE INDEX `invocations_deny_point` ON `invocations` (`point`,`id`) WHERE decision = 'deny';--> statement-breakpoint
CREATE INDEX `invocations_deny_hook` ON `invocations` (`decisive_hook_id`,`id`) WHERE decision = 'deny';--> statement-breakpoint
CREATE INDEX `invocations_deny_hook_set` ON `invocations` (`hook_set_id`,`id`) WHERE decision = 'deny';--> statement-breakpoint
CREATE INDEX `invocations_deny_session` ON `invocations` (`session_id`,`id`) WHERE decision = 'deny';