ALTER TABLE "outcomes" DROP CONSTRAINT "outcomes_invocation_id_invocations_id_fk";
