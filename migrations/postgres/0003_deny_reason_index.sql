-- Denials by reason code read the page's rows instead of every row of the reason (see
-- invocations_deny_reason in src/ledger/postgres/schema.ts). IF NOT EXISTS: re-runnable, as 0002.
CREATE INDEX IF NOT EXISTS "invocations_deny_reason" ON "invocations" USING btree ("reason_code","id") WHERE decision = 'deny';
