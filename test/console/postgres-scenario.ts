import { expect } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import type { Report } from '../../src/domain/outcomes.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { outcomeFromRow, type OutcomeRow } from '../../src/ledger/rows.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { createRunner, parseInvocation } from '../../src/runner/runner.js';

// One small scenario recorded on both engines with the same ids and times: denials in two
// sessions, a modified input, a background hook, a hostile message.

export const hookSet = defineHooks({
  name: 'console-pg',
  version: '3',
  hooks: [
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 10,
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('rm -rf')
          ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf <script>alert(1)</script>' }
          : undefined,
    },
    {
      id: 'quote-paths',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 20,
      run: (inv) => (JSON.stringify(inv.toolInput).includes('cat ') ? { decision: 'modify', input: { command: 'cat -- "f"' } } : undefined),
    },
    { id: 'audit', point: 'pre_tool_use', mode: 'background', run: () => undefined },
    { id: 'post', point: 'post_tool_use', run: () => undefined },
  ],
});

export const inputs = [
  { point: 'user_prompt_submit', sessionId: 'pg-s1', prompt: 'tidy the repo' },
  { point: 'pre_tool_use', sessionId: 'pg-s1', toolName: 'Bash', toolUseId: 'toolu_a', toolInput: { command: 'rm -rf /' } },
  { point: 'pre_tool_use', sessionId: 'pg-s1', toolName: 'Bash', toolUseId: 'toolu_b', toolInput: { command: 'cat f' } },
  { point: 'post_tool_use', sessionId: 'pg-s1', toolName: 'Bash', toolUseId: 'toolu_b', toolInput: { command: 'cat f' }, toolResponse: {} },
  { point: 'pre_tool_use', sessionId: 'pg-s2', toolName: 'Bash', toolUseId: 'toolu_c', toolInput: { command: 'rm -rf ~' } },
  { point: 'pre_tool_use', sessionId: 'pg-s2', toolName: 'Read', toolUseId: 'toolu_d', toolInput: { path: '/etc/hosts' } },
];

/** Records the console scenario on SQLite with the runner, then the same invocations, ids and times through the PostgreSQL write path. */
export async function recordOnBoth(sqlitePath: string, pgUrl: string, writerId: string): Promise<number> {
  const sqlite = SqliteLedger.open({ path: sqlitePath });
  const store = await PostgresStore.open({ url: pgUrl, writerId });
  try {
    const runner = createRunner({ hookSet, ledger: sqlite });
    const reports: Report[] = [];
    for (const input of inputs) reports.push(await runner.run(input));
    await runner.close();
    const recorder = store.writer();
    const hookSetId = await recorder.hookSetId(hookSet);
    const finished = sqlite.sqlite.prepare('SELECT finished_at FROM invocations WHERE id = ?').pluck();
    const background = sqlite.sqlite.prepare(`SELECT * FROM outcomes WHERE mode = 'background' AND invocation_id = ? ORDER BY id`);
    for (const [i, input] of inputs.entries()) {
      const report = reports[i]!;
      const id = await recorder.begin(hookSetId, parseInvocation(input) as Invocation, report.startedAt);
      expect(id).toBe(report.invocationId);
      const pending = await recorder.finish(id, report, report.outcomes, finished.get(id) as number);
      for (const [k, rowId] of pending.entries()) {
        const stored = outcomeFromRow(background.all(id)[k] as OutcomeRow);
        await recorder.startBackground(rowId, stored.startedAt!, stored.executionOrder!);
        await recorder.completeBackground(rowId, stored);
      }
    }
    return reports[0]!.startedAt;
  } finally {
    await store.close();
    await sqlite.close();
  }
}
