import { describe, expect, it } from 'vitest';
import { allow, deny, modify } from '../../src/domain/results.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { setup } from '../helpers.js';

describe('explain', () => {
  it('reproduces the report from the database alone', async () => {
    const { runner, path } = setup([
      {
        id: 'rewrite',
        point: 'pre_tool_use',
        priority: 5,
        capability: 'guardrail',
        run: () => modify({ command: 'ls -a' }, 'show hidden'),
      },
      { id: 'ok', point: 'pre_tool_use', priority: 10, capability: 'guardrail', run: () => allow() },
      {
        id: 'block',
        point: 'pre_tool_use',
        priority: 20,
        capability: 'guardrail',
        run: () => ({ ...deny('not here', 'policy_violation', { why: 'test' }), additionalContext: 'see policy 4' }),
      },
      { id: 'obs', point: 'pre_tool_use', priority: 1, run: () => undefined },
      { id: 'late', point: 'pre_tool_use', priority: 30, run: () => undefined },
      { id: 'bg', point: 'pre_tool_use', mode: 'background', run: () => undefined },
    ]);
    const report = await runner.run({
      point: 'pre_tool_use',
      sessionId: 's-1',
      turn: 3,
      toolName: 'Bash',
      toolUseId: 'toolu_01',
      toolInput: { command: 'ls' },
      agent: 'test',
      cwd: '/tmp',
      raw: { original: true },
    });
    await runner.close();
    const fresh = SqliteLedger.open({ path });
    try {
      for (const ref of [report.invocationId, String(report.invocationId), 'toolu_01']) {
        const e = explain(fresh, ref);
        expect(e.invocation).toMatchObject({
          id: report.invocationId,
          point: 'pre_tool_use',
          sessionId: 's-1',
          turn: 3,
          toolName: 'Bash',
          toolUseId: 'toolu_01',
          status: 'completed',
          decision: 'deny',
          decisiveHookId: 'block',
          reasonCode: 'policy_violation',
          message: 'not here',
        });
        expect(e.hookSet).toMatchObject({ name: 'test', version: '1', fingerprint: report.hookSet.fingerprint, strategy: 'deny_wins' });
        expect(e.outcomes).toEqual(report.outcomes);
        expect(e.decisive?.hookId).toBe('block');
        expect(e.input).toEqual({ command: 'ls' });
        expect(e.modifiedInput).toEqual({ command: 'ls -a' });
        expect(e.additionalContext).toEqual(['see policy 4']);
        expect(e.raw).toEqual({ original: true });
      }
    } finally {
      fresh.close();
    }
  });

  it('a tool_use_id resolves to its pre_tool_use and lists the related post_tool_use', async () => {
    const { runner, ledger } = setup([{ id: 'x', point: ['pre_tool_use', 'post_tool_use'], run: () => undefined }]);
    const pre = await runner.run({ point: 'pre_tool_use', toolName: 'Read', toolUseId: 'toolu_9' });
    const post = await runner.run({ point: 'post_tool_use', toolName: 'Read', toolUseId: 'toolu_9' });
    const e = explain(ledger, 'toolu_9');
    expect(e.invocation.id).toBe(pre.invocationId);
    expect(e.related).toEqual([{ id: post.invocationId, point: 'post_tool_use', decision: 'none' }]);
  });

  it('an unknown reference is a NotFoundError naming it', () => {
    const { ledger } = setup([]);
    expect(() => explain(ledger, 'toolu_missing')).toThrow(/no invocation with id or tool_use_id "toolu_missing"/);
  });
});
