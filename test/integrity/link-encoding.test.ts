import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkpointEntry, CHAIN_ENCODING_V1, invocationEntry, linkHash, outcomeEntry, type RowEntry } from '../../src/ledger/integrity.js';

/**
 * The chain's encoding written out as plain string building, the way docs/integrity.md states
 * it: linkHash writes the same text as bytes into a reused buffer (to allocate nothing per
 * value on the decision path), and must hash exactly what this text's UTF-8 form hashes, or
 * every ledger written before would stop verifying.
 */
function referenceText(tag: string, values: readonly unknown[]): string {
  let out = tag;
  for (const v of values) {
    if (v === null || v === undefined) out += '|n';
    else if (typeof v === 'string') out += '|s' + v.length + ':' + v;
    else if (typeof v === 'number') out += (Number.isInteger(v) ? '|i' : '|r') + v;
    else if (typeof v === 'bigint') out += '|i' + v;
    else if (Buffer.isBuffer(v)) out += '|b' + v.toString('hex');
    else out += '|?' + String(v);
  }
  return out;
}

function referenceHash(
  prev: string,
  seq: number,
  kind: string,
  refId: number,
  at: number,
  rows: { label: string; tag: string; values: unknown[] }[],
) {
  let text = `hookledger-chain-v${CHAIN_ENCODING_V1.version}\n${prev}\n${seq}\n${kind}\n${refId}\n${at}`;
  for (const r of rows) text += `\n${r.label}\n` + referenceText(r.tag, r.values);
  return createHash('sha256').update(text).digest('hex');
}

const WELL_FORMED: unknown[] = [
  1,
  'a',
  null,
  undefined,
  0,
  -0,
  -5,
  3.25,
  -1e-7,
  1e21,
  2 ** 53,
  -(2 ** 53) - 2,
  999_999_999,
  1_000_000_000,
  1_000_000_007,
  1_732_400_000_123,
  Number.MAX_SAFE_INTEGER,
  NaN,
  Infinity,
  -Infinity,
  '',
  'héllo ☃ 😀',
  'x'.repeat(24),
  'x'.repeat(23) + 'é',
  'é' + 'x'.repeat(100),
  '\u0000nul inside',
  '|s3:abc|n', // looks like encoding
  'z'.repeat(300_000), // bigger than the reused buffer
  10n ** 30n,
  -7n,
  Buffer.from([1, 2, 255]),
  true,
];

describe('link hash encoding', () => {
  it('hashes exactly the documented text, for every kind of value, before and after a row larger than the buffer', () => {
    const row = WELL_FORMED;
    const entries: RowEntry[] = [invocationEntry(row), outcomeEntry(row, false), checkpointEntry(row)];
    const rows = entries.map((e) => ({ label: e.label, tag: e.tag, values: [...e.values] }));
    for (const [seq, refId, at] of [
      [1, 1, 0],
      [1_000_000_001, 987_654_321_012, 1_732_400_000_000],
      [7, 42, -1],
    ] as const) {
      expect(linkHash('ab'.repeat(32), seq, 'invocation', refId, at, entries)).toBe(
        referenceHash('ab'.repeat(32), seq, 'invocation', refId, at, rows),
      );
    }
    // A small link after the large one: the buffer was given back and is written from its start.
    const small = [outcomeEntry([5, 'allow-1', 10, null], false)];
    expect(linkHash('0'.repeat(64), 2, 'background', 5, 9, small)).toBe(
      referenceHash('0'.repeat(64), 2, 'background', 5, 9, [{ label: 'o5', tag: 'outcomes', values: [5, 'allow-1', 10, null] }]),
    );
  });

  it('hashes lone surrogates as SQLite stores them (three U+FFFD), length included', () => {
    const row = [3, 'a\ud800b', 'end \udc00', 'pair 😀 ok'];
    const entry = invocationEntry(row);
    const stored = [3, 'a\ufffd\ufffd\ufffdb', 'end \ufffd\ufffd\ufffd', 'pair 😀 ok'];
    expect(linkHash('0'.repeat(64), 1, 'invocation', 3, 5, [entry])).toBe(
      referenceHash('0'.repeat(64), 1, 'invocation', 3, 5, [{ label: 'i3', tag: 'invocations', values: stored }]),
    );
  });
});
