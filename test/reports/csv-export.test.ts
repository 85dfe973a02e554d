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
    // Most rows under a plain hook set, so that their only unusual cells are the text under test.
    const plainSetId = writer.hookSetId(
      defineHooks({ name: 'plain-set', version: '2', hooks: [{ id: 'h', point: 'pre_tool_use', run: () => undefined }] }),
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
      '',
      '-',
      '=',
      'tail\t',
      '\vvt',
      'ff\f',
      '\u2028ls',
      'ps\u2029',
      '\ufeffbom',
      'zwsp\u200b',
      '\u2000en',
      'hair\u200a',
      'a"b',
      'x\r\ny',
      '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24',
      'ok',
    ];
    texts.forEach((text, n) => {
      // Times SQLite's strftime does not write as toISOString does: after 9999, before 1970.
      const at = n === 3 ? 253402300800000 : n === 4 ? -1 : n === 5 ? 0 : n === 6 ? 253402300799999 : 1_700_000_000_000 + n * 1234;
      const id = writer.begin(
        n === 0 || n === texts.length - 1 ? setId : plainSetId,
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
    // Negative and fractional numbers, and NULLs, in a line otherwise plain.
    ledger.sqlite.prepare('UPDATE invocations SET duration_us = -5 WHERE id = 1').run();
    ledger.sqlite.prepare('UPDATE invocations SET duration_us = 2.5, turn = NULL, session_id = NULL WHERE id = ?').run(texts.length);
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
