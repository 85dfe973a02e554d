import type pg from 'pg';
import type { ChainHead } from '../../queries/chain-head.js';

/**
 * Every writer's chain head on PostgreSQL (each writer appends its own chain, postgres/write.ts):
 * the head its `writers` row records, with that link's kind and time. A writer that has not
 * chained anything yet is left out. Read now, not verified: verify checks the recorded head
 * against the chain (a head whose link is gone shows here with no kind or time).
 */
export async function chainHeadsPostgres(pool: pg.Pool): Promise<ChainHead[]> {
  const result = await pool.query<ChainHead>({
    name: 'hl_chain_heads',
    text: `SELECT w.id AS writer, w.head_seq AS seq, w.head_hash AS hash, c.kind, c.at
           FROM writers w LEFT JOIN chain c ON c.writer_id = w.id AND c.seq = w.head_seq
           WHERE w.head_seq > 0 ORDER BY w.id`,
  });
  return result.rows;
}
