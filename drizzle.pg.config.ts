import { defineConfig } from 'drizzle-kit';

/** The PostgreSQL ledger's migrations (`npm run db:generate:pg`); the SQLite ones come from drizzle.config.ts. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/ledger/postgres/schema.ts',
  out: './migrations/postgres',
});
