import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { normaliseInvocation } from '../../src/domain/invocation.js';
import { csvRow, exportRecords, writeExport } from '../../src/ledger/queries/export.js';
import { LedgerWriter } from '../../src/ledger/write.js';
import { tempLedger } from '../helpers.js';

// The streamed CSV (read from the CSV's own columns) must be csvRow's, byte for byte, for hostile and unusual values.
describe('CSV export', () => {
  it('matches csvRow for quotes, commas, line breaks, formulas, edge spaces, non-ASCII edges and odd numbers', async () => {
    const { ledger } = tempLedger();
    const writer = new LedgerWriter(ledger);
    const setId = writer.hookSetId(
      defineHooks({ name: '=set, "x"', version: ' 1', hooks: [{ id: 'h', point: 'pre_tool_use', run: () => undefined }] }),
    );
    const texts = [
      'plain',
      'a,b',
      'say "hi"',
      'two\nlines',
      'cr\r',
      '=HYPERLINK("x")',
      '+1',
      '-2',
      '@sum',
      '\tlead',
      ' lead',
      'trail ',
      '\u00a0nbsp',
      'nbsp\u00a0',
      'é',
      'ü,x',
      '\u3000',
      "'quote",
    ];
    texts.forEach((text, n) => {
      const at = n === 3 ? 253402300800000 : 1_700_000_000_000 + n * 1234;
      const id = writer.begin(
        setId,
        normaliseInvocation({ point: 'pre_tool_use', toolName: text, sessionId: text, agent: text, turn: n }),
        at,
      );
      writer.finish(
        id,
        {
          decision: 'deny',
          decisiveHookId: text,
          reasonCode: null,
          message: text,
          modifiedInput: n % 2 ? { a: 1 } : null,
          additionalContext: [],
          durationUs: n,
        },
        [],
      );
    });
    ledger.sqlite.prepare('UPDATE invocations SET duration_us = 100.0 WHERE id = 2').run();
    const sink = new PassThrough();
    let text = '';
    sink.on('data', (c: Buffer) => (text += c.toString()));
    await writeExport(ledger, {}, sink, { format: 'csv' });
    sink.end();
    await new Promise((resolve) => sink.on('end', resolve));
    const expected = [...exportRecords(ledger, {})].map((r) => `${csvRow(r)}\r\n`).join('');
    expect(text.slice(text.indexOf('\r\n') + 2)).toBe(expected);
    ledger.close();
  });
});
