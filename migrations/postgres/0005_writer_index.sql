-- Reports by ship source (`--source`, docs/ship.md) read one source's rows newest first instead of
-- walking every source's (see invocations_writer in src/ledger/postgres/schema.ts). IF NOT EXISTS: re-runnable, as 0003.
CREATE INDEX IF NOT EXISTS "invocations_writer" ON "invocations" USING btree ("writer_id","id");
