import { afterEach, describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { openPostgresLedger } from '../../src/ledger/postgres/engine.js';
import { createRunner } from '../../src/runner/runner.js';
import { adminSql, freshDatabase } from './support.js';

const ledgers: Ledger[] = [];
afterEach(async () => {
  for (const ledger of ledgers.splice(0)) await ledger.close();
});

const hookSet = defineHooks({
  name: 'summaries',
  version: '1',
  hooks: [
    {
      id: 'deny-rm',
      point: 'pre_tool_use',
      capability: 'guardrail',
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('rm') ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no' } : undefined,
    },
    {
      id: 'ask-curl',
      point: 'pre_tool_use',
      capability: 'guardrail',
      run: (inv) => (JSON.stringify(inv.toolInput).includes('curl') ? { decision: 'ask', message: 'sure?' } : undefined),
    },
    {
      id: 'quote',
      point: 'pre_tool_use',
      capability: 'guardrail',
      run: (inv) => (JSON.stringify(inv.toolInput).includes('cat') ? { decision: 'modify', input: { command: 'cat -- x' } } : undefined),
    },
    {
      id: 'breaks',
      point: 'pre_tool_use',
      run: (inv) => {
        if (JSON.stringify(inv.toolInput).includes('boom')) throw new Error('broken');
        return undefined;
      },
    },
  ],
});

/** The first page from the stored summaries, and the same sessions aggregated from the invocations (a filter that selects everything). */
async function storedAndAggregated(ledger: Ledger) {
  const stored = await ledger.listSessions({}, { limit: 100 });
  const aggregated = await ledger.listSessions({ since: 0 }, { limit: 100 });
  return { stored, aggregated };
}

describe('session summaries on PostgreSQL (kept by the triggers of migrations/postgres/0002)', () => {
  it('match the aggregate after writes, edits outside hookledger and deletions', async () => {
    const { name, url } = await freshDatabase();
    const ledger = await openPostgresLedger({ url });
    ledgers.push(ledger);
    const runner = createRunner({ hookSet, ledger });
    const commands = ['rm -rf /', 'curl x', 'cat y', 'boom', 'ls', 'rm a', 'cat z boom'];
    for (const [i, command] of commands.entries())
      await runner.run({ point: 'pre_tool_use', sessionId: `s${i % 3}`, toolName: 'Bash', toolInput: { command } });
    await runner.run({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'rm' } });
    await runner.close();

    let { stored, aggregated } = await storedAndAggregated(ledger);
    expect(stored.rows).toHaveLength(3);
    expect(stored).toEqual(aggregated);
    expect(stored.rows.map((r) => [r.sessionId, r.invocations, r.denials, r.asks, r.modified, r.failures])).toEqual([
      ['s0', 3, 1, 0, 1, 1],
      ['s2', 2, 1, 0, 1, 0],
      ['s1', 2, 0, 1, 0, 0],
    ]);

    // Edits outside hookledger: a decision changed, an invocation moved to another session, one deleted.
    await adminSql(`UPDATE invocations SET decision = 'deny' WHERE id = 5`, name);
    await adminSql(`UPDATE invocations SET session_id = 's9' WHERE id = 2`, name);
    await adminSql(`DELETE FROM outcomes WHERE invocation_id = 3; DELETE FROM invocations WHERE id = 3`, name);
    ({ stored, aggregated } = await storedAndAggregated(ledger));
    expect(stored).toEqual(aggregated);
    expect(stored.rows.map((r) => r.sessionId).sort()).toEqual(['s0', 's1', 's2', 's9']);
    expect(await adminSql(`SELECT count(*)::int AS n FROM session_summaries WHERE stale = 1`, name)).toEqual([{ n: 0 }]);
  });
});
