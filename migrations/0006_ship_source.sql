CREATE TABLE `ship_source` (
	`id` integer PRIMARY KEY NOT NULL,
	`source_id` text NOT NULL,
	`created_at` integer NOT NULL
);
