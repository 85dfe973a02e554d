import { describe, expect, it } from 'vitest';
import { allow, ask, deny, modify } from '../../src/domain/results.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { bash, setup } from '../helpers.js';

describe('foreground order', () => {
  it('runs by priority, then registration index, when registered out of order', async () => {
    const calls: string[] = [];
    const record = (id: string) => () => void calls.push(id);
    const { runner } = setup([
      { id: 'c', point: 'pre_tool_use', priority: 50, run: record('c') },
      { id: 'a', point: 'pre_tool_use', priority: 10, run: record('a') },
      { id: 'd', point: 'pre_tool_use', priority: 50, run: record('d') },
      { id: 'b', point: 'pre_tool_use', priority: 20, run: record('b') },
    ]);
    const report = await runner.run(bash('ls'));
    expect(calls).toEqual(['a', 'b', 'c', 'd']);
    expect(report.outcomes.map((o) => [o.hookId, o.priority, o.registrationIndex, o.executionOrder])).toEqual([
      ['a', 10, 1, 0],
      ['b', 20, 3, 1],
      ['c', 50, 0, 2],
      ['d', 50, 2, 3],
    ]);
    expect(report.decision).toBe('none');
  });

  it('keeps registration_index stable whatever the matcher selects', async () => {
    const { runner } = setup([
      { id: 'bash-only', point: 'pre_tool_use', match: 'Bash', run: () => undefined },
      { id: 'read-only', point: 'pre_tool_use', match: 'Read', run: () => undefined },
      { id: 'all', point: 'pre_tool_use', run: () => undefined },
      { id: 'elsewhere', point: 'post_tool_use', run: () => undefined },
    ]);
    const report = await runner.run({ point: 'pre_tool_use', toolName: 'Read', toolInput: {} });
    expect(report.outcomes.map((o) => [o.hookId, o.registrationIndex])).toEqual([
      ['read-only', 1],
      ['all', 2],
    ]);
  });

  it('each hook sees the input as modified by the hooks before it', async () => {
    const seen: unknown[] = [];
    const { runner, ledger } = setup([
      {
        id: 'add-flag',
        point: 'pre_tool_use',
        priority: 1,
        capability: 'guardrail',
        run: (inv) => modify({ command: `${(inv.toolInput as { command: string }).command} --dry-run` }, 'dry run first'),
      },
      {
        id: 'quote',
        point: 'pre_tool_use',
        priority: 2,
        capability: 'guardrail',
        run: (inv) => modify({ command: `(${(inv.toolInput as { command: string }).command})` }),
      },
      { id: 'watch', point: 'pre_tool_use', priority: 3, run: (inv) => void seen.push(inv.toolInput) },
    ]);
    const report = await runner.run(bash('npm publish'));
    expect(seen).toEqual([{ command: '(npm publish --dry-run)' }]);
    expect(report.modifiedInput).toEqual({ command: '(npm publish --dry-run)' });
    expect(report.decision).toBe('none');
    expect(report.outcomes[0]).toMatchObject({
      decision: 'modify',
      modifiedInput: { command: 'npm publish --dry-run' },
      message: 'dry run first',
    });
    const stored = explain(ledger, report.invocationId);
    expect(stored.input).toEqual({ command: 'npm publish' });
    expect(stored.modifiedInput).toEqual({ command: '(npm publish --dry-run)' });
  });

  it('modify at user_prompt_submit replaces the prompt', async () => {
    const { runner } = setup([
      { id: 'redact', point: 'user_prompt_submit', capability: 'guardrail', run: (inv) => modify(inv.prompt!.replace(/AKIA\w+/, '[key]')) },
    ]);
    const report = await runner.run({ point: 'user_prompt_submit', prompt: 'use AKIAABCDEFGHIJKLMNOP please' });
    expect(report.modifiedInput).toBe('use [key] please');
  });
});

describe('deny_wins', () => {
  it('a guardrail deny ends the pass; later hooks are skipped naming the denier', async () => {
    const ran: string[] = [];
    const { runner, ledger } = setup([
      { id: 'first', point: 'pre_tool_use', priority: 1, capability: 'guardrail', run: () => (ran.push('first'), allow()) },
      {
        id: 'denier',
        point: 'pre_tool_use',
        priority: 2,
        capability: 'guardrail',
        run: () => (ran.push('denier'), deny('no rm -rf', 'safety_violation', { rule: 7 })),
      },
      { id: 'after-1', point: 'pre_tool_use', priority: 3, capability: 'guardrail', run: () => void ran.push('after-1') },
      { id: 'after-2', point: 'pre_tool_use', priority: 4, run: () => void ran.push('after-2') },
    ]);
    const report = await runner.run(bash('rm -rf /'));
    expect(ran).toEqual(['first', 'denier']);
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'denier', reasonCode: 'safety_violation', message: 'no rm -rf' });
    expect(report.outcomes.map((o) => [o.hookId, o.status, o.decisive, o.skipReason, o.skippedBy])).toEqual([
      ['first', 'completed', false, null, null],
      ['denier', 'completed', true, null, null],
      ['after-1', 'skipped', false, 'pass_ended', 'denier'],
      ['after-2', 'skipped', false, 'pass_ended', 'denier'],
    ]);
    expect(explain(ledger, report.invocationId).decisive?.payload).toEqual({ rule: 7 });
  });

  it('deny beats ask beats allow beats no opinion; the first of the strongest decides', async () => {
    const { runner } = setup([
      { id: 'allow-1', point: 'pre_tool_use', priority: 1, capability: 'guardrail', run: () => allow('fine') },
      { id: 'silent', point: 'pre_tool_use', priority: 2, capability: 'guardrail', run: () => undefined },
      { id: 'ask-1', point: 'pre_tool_use', priority: 3, capability: 'guardrail', run: () => ask('sure?') },
      { id: 'ask-2', point: 'pre_tool_use', priority: 4, capability: 'guardrail', run: () => ask('really?') },
      { id: 'allow-2', point: 'pre_tool_use', priority: 5, capability: 'guardrail', run: () => allow() },
    ]);
    const report = await runner.run(bash('git push'));
    expect(report).toMatchObject({ decision: 'ask', decisiveHookId: 'ask-1', message: 'sure?' });
    expect(report.outcomes.filter((o) => o.decisive).map((o) => o.hookId)).toEqual(['ask-1']);
  });

  it('an allow is the decision when nothing stronger comes', async () => {
    const { runner } = setup([
      { id: 'silent', point: 'pre_tool_use', capability: 'guardrail', run: () => undefined },
      { id: 'ok', point: 'pre_tool_use', capability: 'guardrail', run: () => allow('read-only command') },
    ]);
    expect(await runner.run(bash('ls'))).toMatchObject({ decision: 'allow', decisiveHookId: 'ok', message: 'read-only command' });
  });
});

describe('first_decision_wins', () => {
  it('the first hook that answers decides, even an allow, and later hooks are skipped', async () => {
    const { runner } = setup(
      [
        { id: 'silent', point: 'pre_tool_use', priority: 1, capability: 'guardrail', run: () => undefined },
        { id: 'early-allow', point: 'pre_tool_use', priority: 2, capability: 'guardrail', run: () => allow() },
        { id: 'late-deny', point: 'pre_tool_use', priority: 3, capability: 'guardrail', run: () => deny('too late') },
      ],
      { strategy: 'first_decision_wins' },
    );
    const report = await runner.run(bash('rm -rf /'));
    expect(report).toMatchObject({ decision: 'allow', decisiveHookId: 'early-allow' });
    expect(report.outcomes[2]).toMatchObject({ hookId: 'late-deny', status: 'skipped', skippedBy: 'early-allow' });
  });

  it('a modify is a decision: allow with the new input, and the pass ends', async () => {
    const { runner } = setup(
      [
        { id: 'rewrite', point: 'pre_tool_use', priority: 1, capability: 'guardrail', run: () => modify({ command: 'ls -la' }) },
        { id: 'never', point: 'pre_tool_use', priority: 2, capability: 'guardrail', run: () => deny('x') },
      ],
      { strategy: 'first_decision_wins' },
    );
    const report = await runner.run(bash('ls'));
    expect(report).toMatchObject({ decision: 'allow', decisiveHookId: 'rewrite', modifiedInput: { command: 'ls -la' } });
    expect(report.outcomes[1]!.status).toBe('skipped');
  });
});

describe('observers', () => {
  it("an observer's deny, ask or modify is recorded as observe_only_violation and not obeyed", async () => {
    const seen: unknown[] = [];
    const { runner } = setup([
      { id: 'obs-deny', point: 'pre_tool_use', priority: 1, run: () => deny('I would block this') },
      { id: 'obs-modify', point: 'pre_tool_use', priority: 2, run: () => modify({ command: 'evil' }) },
      { id: 'obs-ask', point: 'pre_tool_use', priority: 3, run: () => ask('hmm') },
      { id: 'guard', point: 'pre_tool_use', priority: 4, capability: 'guardrail', run: (inv) => (seen.push(inv.toolInput), undefined) },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report.decision).toBe('none');
    expect(report.modifiedInput).toBeNull();
    expect(seen).toEqual([{ command: 'ls' }]);
    for (const o of report.outcomes.slice(0, 3)) {
      expect(o).toMatchObject({ status: 'completed', failureReason: 'observe_only_violation', decisive: false });
    }
    expect(report.outcomes.map((o) => o.decision)).toEqual(['deny', 'modify', 'ask', 'none']);
  });
});
