import type { RawRow } from '../integrity.js';
import type { PostgresIntegrityProblem } from './verify.js';

/**
 * Outcomes whose invocation is gone. PostgreSQL does not enforce `outcomes.invocation_id` (schema.ts,
 * docs/ship.md "Central schema"): every hookledger writer keeps it, so such an outcome means a
 * deletion or an insertion outside hookledger. Each is named with the writer or shipped source
 * whose chain covered it: a writer's invocation link names the central invocation id; a shipped
 * source's link names the source's ids, so the source is the one whose invocation link lists the
 * outcome (`o<id>` in its rows) while the centre no longer holds that invocation.
 */

type Rows = (text: string, values: unknown[]) => Promise<RawRow[]>;

const ORPHANS = `SELECT o.id, o.invocation_id, o.source_ref, count(*) OVER () FROM outcomes o
  WHERE NOT EXISTS (SELECT 1 FROM invocations i WHERE i.id = o.invocation_id) ORDER BY o.id LIMIT $1`;
const WRITER_LINKS = `SELECT c.ref_id, c.writer_id, c.seq FROM chain c
  WHERE c.kind = 'invocation' AND c.ref_id = ANY($1::bigint[]) AND c.writer_id NOT IN (SELECT id FROM ship_sources)`;
// One pass over the shipped links, for every orphan at once (a regular expression of their source ids).
const SOURCE_LINKS = `SELECT c.writer_id, s.host, c.seq, c.ref_id, c.rows FROM chain c JOIN ship_sources s ON s.id = c.writer_id
  WHERE c.kind = 'invocation' AND c.rows ~ $1
    AND NOT EXISTS (SELECT 1 FROM invocations i WHERE i.writer_id = c.writer_id AND i.source_ref = c.ref_id)`;

/** The orphan outcomes (at most `limit` named) and how many there are in all. */
export async function orphanOutcomes(rows: Rows, limit: number): Promise<{ problems: PostgresIntegrityProblem[]; count: number }> {
  const orphans = (await rows(ORPHANS, [limit])).map(([id, invocationId, sourceRef, total]) => ({
    id: Number(id),
    invocationId: Number(invocationId),
    sourceRef: sourceRef === null ? null : Number(sourceRef),
    total: Number(total),
  }));
  if (orphans.length === 0) return { problems: [], count: 0 };

  const writerOf = new Map<number, { writer: string; seq: number }>();
  const local = orphans.filter((o) => o.sourceRef === null).map((o) => o.invocationId);
  if (local.length > 0)
    for (const [refId, writer, seq] of await rows(WRITER_LINKS, [local]))
      writerOf.set(Number(refId), { writer: writer as string, seq: Number(seq) });

  const sourcesOf = new Map<number, { source: string; host: string; seq: number; refId: number }[]>();
  const shipped = [...new Set(orphans.flatMap((o) => (o.sourceRef === null ? [] : [o.sourceRef])))];
  if (shipped.length > 0)
    for (const [source, host, seq, refId, text] of await rows(SOURCE_LINKS, [`(^| )o(${shipped.join('|')})~?:`])) {
      for (const m of (text as string).matchAll(/(?:^| )o(\d+)~?:/g)) {
        const ref = Number(m[1]);
        if (!shipped.includes(ref)) continue;
        if (!sourcesOf.has(ref)) sourcesOf.set(ref, []);
        sourcesOf.get(ref)!.push({ source: source as string, host: host as string, seq: Number(seq), refId: Number(refId) });
      }
    }

  const problems = orphans.map((o): PostgresIntegrityProblem => {
    const base = { kind: 'inserted' as const, table: 'outcomes' as const, id: o.id };
    if (o.sourceRef === null) {
      const link = writerOf.get(o.invocationId);
      const what = `outcome #${o.id} has no invocation: invocation #${o.invocationId}`;
      return link
        ? { ...base, seq: link.seq, writer: link.writer, detail: `writer ${link.writer}: ${what} (link ${link.seq}) is gone` }
        : { ...base, seq: null, writer: null, detail: `${what} is gone and no writer's chain covers it` };
    }
    const what = `outcome #${o.sourceRef} (central #${o.id}) has no invocation`;
    const sources = sourcesOf.get(o.sourceRef) ?? [];
    if (sources.length === 0)
      return {
        ...base,
        seq: null,
        writer: null,
        detail: `${what}: central invocation #${o.invocationId} is gone and no source's chain covers it`,
      };
    // Source ids repeat across sources: every source whose chain lists the outcome and lacks its invocation is named.
    const first = sources[0]!;
    return {
      ...base,
      seq: first.seq,
      writer: first.source,
      detail: `${sources.map((s) => `source ${s.source} (host ${s.host})`).join(' or ')}: ${what}: invocation #${first.refId} (link ${first.seq}) is gone`,
    };
  });
  return { problems, count: orphans[0]!.total };
}
