import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { openLedger } from '../../src/ledger/open.js';
import { BATCH_READS, OUTCOME_COLUMNS, OUTCOME_COPY_COLUMNS, readBatch } from '../../src/ledger/ship-source.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { createRunner } from '../../src/runner/runner.js';
import { tempDir } from '../helpers.js';

describe('ship: reading a batch from the local ledger (ship-source.ts)', { timeout: 60_000 }, () => {
  it('reads each batch by its seq range: no statement scans the chain by kind, so the cost of a batch does not grow with the ledger', async () => {
    const path = join(tempDir(), 'laptop.db');
    const writer = SqliteLedger.open({ path });
    const runner = createRunner({
      ledger: writer,
      hookSet: defineHooks({
        name: 'read',
        hooks: [{ id: 'guard', point: 'pre_tool_use', capability: 'guardrail', run: () => undefined }],
      }),
    });
    for (let i = 0; i < 30; i++)
      await runner.run({ point: 'pre_tool_use', sessionId: 's', toolName: 'Bash', toolInput: { command: `echo ${i}` } });
    await runner.close();
    writer.close();
    const ledger = openLedger({ path, readonly: true });
    try {
      const sqlite = ledger.sqlite;
      // `kind = 'invocation' AND seq BETWEEN …` made SQLite walk the chain_ref index over every invocation link of the ledger, per slice.
      for (const sql of BATCH_READS) {
        const plan = (sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ lo: 1, hi: 2, writer: 'w' }) as { detail: string }[]).map(
          (r) => r.detail,
        );
        const chainReads = plan.filter((detail) => /^(SEARCH|SCAN) (chain|c)\b/.test(detail));
        expect(chainReads.length, sql).toBeGreaterThan(0);
        for (const detail of chainReads) expect(detail, sql).toMatch(/USING INTEGER PRIMARY KEY \(rowid(=\?|>\? AND rowid<\?)\)/);
      }
      // A batch in the middle of the chain holds exactly its links' invocations, one outcome line each, ending at the last link.
      const batch = readBatch(ledger, 10, 5, 'src-test');
      expect(batch.links).toBe(5);
      expect(batch.span).toMatchObject({ firstSeq: 11, lastSeq: 15 });
      expect(batch.invocations.map((row) => row[0])).toEqual([11, 12, 13, 14, 15]);
      expect(batch.invocations.every((row) => row[2].endsWith('\tsrc-test\n') && row[3]!.split('\n').length === 1)).toBe(true);
      expect(
        batch.linksText
          .split('\n')
          .filter(Boolean)
          .map((line) => Number(line.split('\t')[0])),
      ).toEqual([11, 12, 13, 14, 15]);
    } finally {
      ledger.close();
    }
  });

  it('a background outcome that completed after its invocation committed is read as it was then (pending, no result); its completion comes with its own link', async () => {
    const path = join(tempDir(), 'laptop.db');
    const writer = SqliteLedger.open({ path });
    const runner = createRunner({
      ledger: writer,
      hookSet: defineHooks({
        name: 'bg',
        hooks: [
          { id: 'fg', point: 'pre_tool_use', capability: 'guardrail', run: () => undefined },
          { id: 'bg', point: 'pre_tool_use', mode: 'background', run: () => new Promise<void>((resolve) => setTimeout(resolve, 5)) },
        ],
      }),
    });
    for (let i = 0; i < 3; i++)
      await runner.run({ point: 'pre_tool_use', sessionId: 's', toolName: 'Bash', toolInput: { command: `echo ${i}` } });
    await runner.close();
    writer.close();
    const ledger = openLedger({ path, readonly: true });
    try {
      const status = OUTCOME_COPY_COLUMNS.indexOf('status');
      const decision = OUTCOME_COPY_COLUMNS.indexOf('decision');
      const completed = ledger.sqlite.prepare(`SELECT count(*) FROM outcomes WHERE hook_id = 'bg' AND status = 'completed'`).pluck().get();
      expect(completed).toBe(3);
      const batch = readBatch(ledger, 0, 100, 'src-test');
      const lines = batch.invocations.flatMap((row) => row[3]!.split('\n').map((line) => ['central', ...line.split('\t')]));
      const background = lines.filter((fields) => fields[1] === 'bg');
      expect(background).toHaveLength(3);
      for (const fields of background) {
        expect(fields[status]).toBe('pending');
        expect(fields[decision]).toBe('\\N');
      }
      expect(lines.filter((fields) => fields[1] === 'fg').every((fields) => fields[status] === 'completed')).toBe(true);
      expect(batch.completions.map((row) => row[OUTCOME_COLUMNS.indexOf('status')])).toEqual(['completed', 'completed', 'completed']);
    } finally {
      ledger.close();
    }
  });
});
