import { getTableColumns } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { invocations } from '../../src/ledger/schema.js';
import { columnName, invocationWriteColumns } from '../../src/ledger/write.js';

describe('the write path’s invocation columns come from the drizzle schema', () => {
  it('every drizzle key maps to its SQL column name by the schema’s snake_case convention', () => {
    for (const [key, column] of Object.entries(getTableColumns(invocations))) expect(columnName(key)).toBe(column.name);
  });

  it('begin and finish together bind every column of the table but id and status, each once (redactions_json by both)', () => {
    const { begin, final } = invocationWriteColumns();
    const all = Object.values(getTableColumns(invocations)).map((c) => c.name);
    expect(new Set([...begin, ...final, 'id', 'status'])).toEqual(new Set(all));
    expect(begin.filter((c) => final.includes(c))).toEqual(['redactions_json']);
    expect(new Set(begin).size).toBe(begin.length);
  });
});
