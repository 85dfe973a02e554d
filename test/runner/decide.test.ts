import { describe, expect, it } from 'vitest';
import { normaliseInvocation } from '../../src/domain/invocation.js';
import type { Outcome } from '../../src/domain/outcomes.js';
import { deny } from '../../src/domain/results.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { HookSetReplayer } from '../../src/replay/rerun.js';
import { bash, setup, waitFor } from '../helpers.js';

/** The fields the shared decide core sets for each outcome. */
const shape = (o: Outcome) => [o.hookId, o.status, o.executionOrder, o.skipReason, o.skippedBy, o.decisive];

// Issue 10 §4: the live runner and replay share one decide core (runner/decide.ts): the
// background placeholders after a deny and the background execution-order offset come from
// the same function, so a replay of an invocation records what the live run recorded.
describe('one decide core for live runs and replay', () => {
  const hooks = () => [
    { id: 'bg-1', point: 'pre_tool_use' as const, mode: 'background' as const, priority: 1, run: () => undefined },
    { id: 'first', point: 'pre_tool_use' as const, capability: 'guardrail' as const, priority: 1, run: () => undefined },
    {
      id: 'rm-guard',
      point: 'pre_tool_use' as const,
      capability: 'guardrail' as const,
      priority: 2,
      run: (inv: { toolInput: unknown }) => ((inv.toolInput as { command: string }).command.startsWith('rm') ? deny('no rm') : undefined),
    },
    { id: 'last', point: 'pre_tool_use' as const, capability: 'guardrail' as const, priority: 3, run: () => undefined },
    { id: 'bg-2', point: 'pre_tool_use' as const, mode: 'background' as const, priority: 2, run: () => undefined },
  ];

  it('after a deny: the same skipped foreground and background outcomes, naming the denier', async () => {
    const { runner } = setup(hooks());
    const live = await runner.run(bash('rm -rf /'));
    const replayer = new HookSetReplayer(runner.hookSet, true);
    const replayed = await replayer.run(normaliseInvocation(bash('rm -rf /')), undefined);
    await replayer.close();
    const expected = [
      ['first', 'completed', 0, null, null, false],
      ['rm-guard', 'completed', 1, null, null, true],
      ['last', 'skipped', null, 'pass_ended', 'rm-guard', false],
      ['bg-1', 'skipped', null, 'denied', 'rm-guard', false],
      ['bg-2', 'skipped', null, 'denied', 'rm-guard', false],
    ];
    expect(live.outcomes.map(shape)).toEqual(expected);
    expect(replayed.outcomes.map(shape)).toEqual(expected);
  });

  it('without a deny: background hooks run after every foreground hook that ran, in the same order live and in replay', async () => {
    const { runner, ledger } = setup(hooks());
    const live = await runner.run(bash('ls'));
    await waitFor(() => explain(ledger, live.invocationId).outcomes.every((o) => o.status === 'completed'));
    const stored = explain(ledger, live.invocationId).outcomes;
    const replayer = new HookSetReplayer(runner.hookSet, true);
    const replayed = await replayer.run(normaliseInvocation(bash('ls')), undefined);
    await replayer.close();
    const expected = [
      ['first', 'completed', 0, null, null, false],
      ['rm-guard', 'completed', 1, null, null, false],
      ['last', 'completed', 2, null, null, false],
      ['bg-1', 'completed', 3, null, null, false],
      ['bg-2', 'completed', 4, null, null, false],
    ];
    expect(stored.map(shape)).toEqual(expected);
    expect(replayed.outcomes.map(shape)).toEqual(expected);
    // Replay without background hooks records them skipped, with their own reason.
    const bare = new HookSetReplayer(runner.hookSet, false);
    const skipped = await bare.run(normaliseInvocation(bash('ls')), undefined);
    expect(skipped.outcomes.slice(3).map(shape)).toEqual([
      ['bg-1', 'skipped', null, 'replay_without_background', null, false],
      ['bg-2', 'skipped', null, 'replay_without_background', null, false],
    ]);
  });
});
