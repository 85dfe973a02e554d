import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { explain } from '../../src/ledger/queries/explain.js';
import { CSV_COLUMNS, csvRow, exportRecords, writeExport, type ExportRecord } from '../../src/ledger/queries/export.js';
import { defineHooks } from '../../src/domain/hooks.js';
import { normaliseInvocation } from '../../src/domain/invocation.js';
import { LedgerWriter } from '../../src/ledger/write.js';
import { buildLedger } from './fixture.js';

/** A consumer slower than the producer, with a tiny buffer: the export must wait for 'drain'. */
function slowSink(): { stream: Writable; text: () => string; maxBuffered: () => number } {
  const chunks: string[] = [];
  let maxBuffered = 0;
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      maxBuffered = Math.max(maxBuffered, stream.writableLength);
      setImmediate(done);
    },
  });
  return { stream, text: () => chunks.join(''), maxBuffered: () => maxBuffered };
}

describe('export', () => {
  it('JSON Lines round-trip: every invocation and every outcome appears exactly once, as explain shows it', async () => {
    const { ledger, recorded } = await buildLedger();
    const sink = slowSink();
    const count = await writeExport(ledger, {}, sink.stream);
    await new Promise<void>((resolve) => sink.stream.end(resolve));
    const lines = sink.text().trimEnd().split('\n');
    expect(count).toBe(recorded.length);
    expect(lines).toHaveLength(recorded.length);
    const records = lines.map((l) => JSON.parse(l) as ExportRecord);
    expect(records.map((r) => r.id)).toEqual(recorded.map((r) => r.report.invocationId));
    const outcomeRows = ledger.sqlite.prepare('SELECT count(*) FROM outcomes').pluck().get() as number;
    expect(records.reduce((a, r) => a + r.outcomes.length, 0)).toBe(outcomeRows);
    records.forEach((r, i) => {
      const { report, input } = recorded[i]!;
      expect(r.outcomes).toEqual(JSON.parse(JSON.stringify(report.outcomes)));
      expect(r).toMatchObject({
        decision: report.decision,
        decisiveHookId: report.decisiveHookId,
        sessionId: input.sessionId,
        point: report.point,
      });
      const e = explain(ledger, r.id);
      expect(r.input).toEqual(e.input);
      expect(r.modifiedInput).toEqual(e.modifiedInput);
      expect(r.hookSet).toEqual({ id: e.hookSet.id, name: e.hookSet.name, version: e.hookSet.version, fingerprint: e.hookSet.fingerprint });
    });
    // The 1 KiB buffer was respected: lines were coalesced, but the export waited for drain.
    expect(sink.maxBuffered()).toBeLessThan(70_000);
  });

  it('each JSON line is byte for byte JSON.stringify of its ExportRecord (stored JSON spliced in, not re-serialised)', async () => {
    const { ledger } = await buildLedger();
    // Awkward stored JSON: escapes, a lone surrogate, large and negative-zero numbers, nested values, a modify.
    const writer = new LedgerWriter(ledger);
    const setId = writer.hookSetId(defineHooks({ name: 'odd', hooks: [{ id: 'x', point: 'pre_tool_use', run: () => undefined }] }));
    const odd = { command: 'echo "é\u2028\ud800\t\\"', n: 1e21, z: -0, list: [1.5, null, { deep: ['a'] }], __proto__: 1 };
    const id = writer.begin(
      setId,
      normaliseInvocation({ point: 'pre_tool_use', toolName: 'Bash', toolInput: odd, sessionId: 'odd' }),
      Date.now(),
    );
    writer.finish(
      id,
      {
        decision: 'none',
        decisiveHookId: null,
        reasonCode: null,
        message: 'm "q"',
        modifiedInput: { command: 'ls -a' },
        additionalContext: ['ctx "1"'],
        durationUs: 3,
      },
      [
        {
          hookId: 'x',
          point: 'pre_tool_use',
          priority: 1,
          registrationIndex: 0,
          executionOrder: 0,
          mode: 'foreground',
          capability: 'guardrail',
          runtime: 'in_process',
          status: 'completed',
          decision: 'modify',
          decisive: false,
          reasonCode: null,
          message: 'ü',
          payload: { k: [odd] },
          modifiedInput: { command: 'ls -a' },
          additionalContext: 'ctx "1"',
          failureReason: null,
          failureDetail: null,
          skipReason: null,
          skippedBy: null,
          timeoutMs: 100,
          startedAt: Date.now(),
          durationUs: 2,
        },
      ],
    );
    const sink = slowSink();
    await writeExport(ledger, {}, sink.stream);
    await new Promise<void>((resolve) => sink.stream.end(resolve));
    const expected = [...exportRecords(ledger, {})].map((r) => `${JSON.stringify(r)}\n`).join('');
    expect(sink.text()).toBe(expected);
    expect(sink.text()).toContain('\\ud800');
  });

  it('applies the same filters as denials', async () => {
    const { ledger, recorded } = await buildLedger();
    const denied = [...exportRecords(ledger, { decision: 'deny', toolName: 'Bash' })];
    expect(denied.map((r) => r.id)).toEqual(
      recorded.filter((r) => r.report.decision === 'deny' && r.input.toolName === 'Bash').map((r) => r.report.invocationId),
    );
    const s3 = [...exportRecords(ledger, { sessionId: 's-3' })];
    expect(s3.map((r) => r.id)).toEqual(recorded.filter((r) => r.input.sessionId === 's-3').map((r) => r.report.invocationId));
  });

  it('CSV has the invocation-level columns, quoted where needed', async () => {
    const { ledger, recorded } = await buildLedger();
    const sink = slowSink();
    await writeExport(ledger, { sessionId: 's-1' }, sink.stream, { format: 'csv' });
    const lines = sink.text().trimEnd().split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    const mine = recorded.filter((r) => r.input.sessionId === 's-1');
    expect(lines).toHaveLength(mine.length + 1);
    const denial = mine.find((r) => r.report.decisiveHookId === 'no-rm')!;
    const line = lines.find((l) => l.startsWith(`${denial.report.invocationId},`))!;
    expect(line).toContain(',deny,no-rm,safety_violation,rm -rf is not allowed,false,');
    // The streamed CSV (built from the CSV's columns only) is csvRow of each ExportRecord.
    const records = [...exportRecords(ledger, { sessionId: 's-1' })];
    expect(lines.slice(1)).toEqual(records.map(csvRow));
    expect(await writeExport(ledger, {}, sink.stream, { format: 'xml' as 'csv' }).catch((e: Error) => e.message)).toMatch(
      /format: "xml" is not an export format/,
    );
  });
});
