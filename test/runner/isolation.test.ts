import { describe, expect, it } from 'vitest';
import { allow, deny, modify } from '../../src/domain/results.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { bash, setup } from '../helpers.js';

/** Busy-waits: a hook that blocks the event loop, as a careless synchronous guardrail does. */
function block(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    // spin
  }
}

const noRm = {
  id: 'no-rm',
  point: 'pre_tool_use' as const,
  priority: 50,
  capability: 'guardrail' as const,
  run: (inv: { toolInput: unknown }) =>
    (inv.toolInput as { command: string }).command.startsWith('rm') ? deny('no rm', 'safety_violation') : allow(),
};

describe('what hooks can and cannot change', () => {
  it('an observer that rewrites the input in place fails, is not obeyed, and the guardrail after it sees the original', async () => {
    const { runner, ledger } = setup([
      { id: 'sneaky', point: 'pre_tool_use', priority: 1, run: (inv) => void ((inv.toolInput as { command: string }).command = 'ls') },
      noRm,
    ]);
    const toolInput = { command: 'rm -rf /' };
    const report = await runner.run({ ...bash('x'), toolInput });
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'no-rm', modifiedInput: null });
    expect(report.outcomes[0]).toMatchObject({
      hookId: 'sneaky',
      status: 'failed',
      failureReason: 'execution_failed',
      failureDetail: expect.stringMatching(/read only|read-only/),
    });
    // The caller's object is untouched, and the ledger holds what the agent sent.
    expect(toolInput).toEqual({ command: 'rm -rf /' });
    expect(explain(ledger, report.invocationId).input).toEqual({ command: 'rm -rf /' });
  });

  it('a guardrail that changes what it returned after returning does not change the record or later hooks', async () => {
    let kept: { command: string } | null = null;
    let seen = '';
    const { runner, ledger } = setup([
      {
        id: 'rewrite',
        point: 'pre_tool_use',
        priority: 1,
        capability: 'guardrail',
        run: () => {
          kept = { command: 'ls -a' };
          return modify(kept);
        },
      },
      {
        id: 'late',
        point: 'pre_tool_use',
        priority: 2,
        capability: 'guardrail',
        run: async (inv) => {
          kept!.command = 'rm -rf /';
          seen = (inv.toolInput as { command: string }).command;
          return allow();
        },
      },
    ]);
    const report = await runner.run(bash('ls'));
    expect(seen).toBe('ls -a');
    expect(report.modifiedInput).toEqual({ command: 'ls -a' });
    expect(explain(ledger, report.invocationId).modifiedInput).toEqual({ command: 'ls -a' });
  });

  it.each([
    ['a string as a tool input', 'pre_tool_use', 'rm -rf /', /a replacement tool input must be an object/],
    ['an object as a prompt', 'user_prompt_submit', { text: 'hi' }, /a replacement prompt must be a string/],
    ['anything at session_start', 'session_start', { x: 1 }, /nothing can be modified at session_start/],
  ] as const)('a modify with %s is invalid_result', async (_what, point, input, detail) => {
    const { runner } = setup([{ id: 'bad', point, capability: 'guardrail', onFailure: 'allow', run: () => modify(input as never) }]);
    const invocation = point === 'pre_tool_use' ? bash('ls') : point === 'user_prompt_submit' ? { point, prompt: 'hello' } : { point };
    const report = await runner.run(invocation);
    expect(report.modifiedInput).toBeNull();
    expect(report.outcomes[0]).toMatchObject({
      status: 'failed',
      failureReason: 'invalid_result',
      failureDetail: expect.stringMatching(detail),
    });
  });
});

describe('hooks that misbehave', () => {
  it('a synchronous guardrail that overruns its timeout is recorded timed out and not obeyed', async () => {
    const { runner } = setup([
      { id: 'slow-sync', point: 'pre_tool_use', capability: 'guardrail', timeoutMs: 20, run: () => (block(80), allow()) },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'slow-sync', reasonCode: 'timeout' });
    expect(report.outcomes[0]).toMatchObject({
      status: 'timed_out',
      failureReason: 'timeout',
      failureDetail: expect.stringMatching(/past its 20 ms timeout/),
    });
  });

  it('a result whose `then` getter throws is a failure, and the invocation is still committed', async () => {
    const { runner, ledger } = setup([
      {
        id: 'hostile',
        point: 'pre_tool_use',
        capability: 'guardrail',
        run: () =>
          ({
            get then() {
              throw new Error('gotcha');
            },
          }) as never,
      },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report).toMatchObject({ decision: 'deny', reasonCode: 'runtime_error' });
    expect(report.outcomes[0]).toMatchObject({
      status: 'failed',
      failureReason: 'execution_failed',
      failureDetail: expect.stringContaining('gotcha'),
    });
    expect(explain(ledger, report.invocationId).invocation.status).toBe('completed');
  });
});

describe('background hooks and the caller', () => {
  it('never run inside run(): a blocking background hook does not hold back the decision', async () => {
    let startedBeforeReturn = false;
    let returned = false;
    const { runner, ledger } = setup([
      { id: 'ok', point: 'pre_tool_use', capability: 'guardrail', run: () => allow() },
      { id: 'heavy', point: 'pre_tool_use', mode: 'background', run: () => void ((startedBeforeReturn = !returned), block(300)) },
    ]);
    const t0 = Date.now();
    const report = await runner.run(bash('ls'));
    returned = true;
    expect(Date.now() - t0).toBeLessThan(250);
    expect(report.outcomes.find((o) => o.hookId === 'heavy')).toMatchObject({ status: 'pending' });
    await runner.close({ deadlineMs: 5000 });
    expect(startedBeforeReturn).toBe(false);
    expect(explain(ledger, report.invocationId).outcomes.find((o) => o.hookId === 'heavy')).toMatchObject({ status: 'completed' });
  });

  it('close() keeps its deadline for an async hook that ignores its signal', async () => {
    const { runner, ledger } = setup([
      { id: 'deaf', point: 'post_tool_use', mode: 'background', timeoutMs: 10_000, run: () => new Promise(() => {}) },
    ]);
    const report = await runner.run({ point: 'post_tool_use', toolName: 'Bash', toolInput: { command: 'ls' } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const t0 = Date.now();
    await runner.close({ deadlineMs: 100 });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(explain(ledger, report.invocationId).outcomes[0]).toMatchObject({
      status: 'timed_out',
      failureDetail: expect.stringMatching(/runner closed/),
    });
  });

  it('are reported in the order explain reads them back', async () => {
    const { runner, ledger } = setup([
      { id: 'g', point: 'pre_tool_use', capability: 'guardrail', run: () => allow() },
      { id: 'b-late', point: 'pre_tool_use', mode: 'background', priority: 200, run: () => undefined },
      { id: 'b-early', point: 'pre_tool_use', mode: 'background', priority: 10, run: () => undefined },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report.outcomes.map((o) => o.hookId)).toEqual(['g', 'b-early', 'b-late']);
    await runner.close();
    expect(explain(ledger, report.invocationId).outcomes.map((o) => o.hookId)).toEqual(['g', 'b-early', 'b-late']);
  });
});

describe('an allow or ask that also rewrites the input (Claude Code: a permission decision with updatedInput)', () => {
  it('applies the rewrite and keeps the decision; an ask with a rewrite outranks a plain allow', async () => {
    const { runner, ledger } = setup([
      {
        id: 'sanitise-and-ask',
        point: 'pre_tool_use',
        priority: 1,
        capability: 'guardrail',
        run: () => ({ decision: 'ask', message: 'confirm the safer command', input: { command: 'rm -ri ./tmp' } }),
      },
      {
        id: 'sees',
        point: 'pre_tool_use',
        priority: 2,
        capability: 'guardrail',
        run: (inv) => allow(`saw ${(inv.toolInput as { command: string }).command}`),
      },
    ]);
    const report = await runner.run(bash('rm -rf ./tmp'));
    expect(report).toMatchObject({ decision: 'ask', decisiveHookId: 'sanitise-and-ask', modifiedInput: { command: 'rm -ri ./tmp' } });
    expect(report.outcomes[0]).toMatchObject({ decision: 'ask', modifiedInput: { command: 'rm -ri ./tmp' } });
    expect(report.outcomes[1]).toMatchObject({ decision: 'allow', message: 'saw rm -ri ./tmp' });
    expect(explain(ledger, report.invocationId).outcomes[0]).toMatchObject({ decision: 'ask', modifiedInput: { command: 'rm -ri ./tmp' } });
  });

  it('an observer that returns allow with a replacement is an observe_only_violation and changes nothing', async () => {
    const { runner } = setup([{ id: 'obs', point: 'pre_tool_use', run: () => ({ decision: 'allow', input: { command: 'ls' } }) }]);
    const report = await runner.run(bash('rm -rf /'));
    expect(report).toMatchObject({ decision: 'none', modifiedInput: null });
    expect(report.outcomes[0]).toMatchObject({
      failureReason: 'observe_only_violation',
      failureDetail: expect.stringContaining('allow with a replacement input'),
    });
  });
});
