import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { deny } from '../../src/domain/results.js';
import { createRunner } from '../../src/runner/runner.js';
import type { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { showReplayRun, listReplayRuns } from '../../src/ledger/queries/replay-runs.js';
import { replay } from '../../src/replay/replay.js';
import { sleepUnlessAborted, tempLedger } from '../helpers.js';
import { bashCall, history, readCall, record, v1, v1Hooks, variant } from './fixtures.js';

const command = (inv: { toolInput: unknown }) => String((inv.toolInput as { command?: string } | null)?.command ?? '');
const filePath = (inv: { toolInput: unknown }) => String((inv.toolInput as { file_path?: string } | null)?.file_path ?? '');

function liveTables(ledger: SqliteLedger): string {
  const dump = (table: string) => JSON.stringify(ledger.sqlite.prepare(`SELECT * FROM ${table} ORDER BY id`).all());
  return `${dump('invocations')}\n${dump('outcomes')}`;
}

async function recorded(): Promise<SqliteLedger> {
  const { ledger } = tempLedger();
  await record(ledger);
  return ledger;
}

const hookDef = (id: string) => v1Hooks.find((h) => h.id === id)!;

describe('replay', () => {
  it('against the same hook set changes nothing, and leaves the live tables byte-for-byte untouched', async () => {
    const ledger = await recorded();
    const before = liveTables(ledger);
    const result = await replay({ ledger, hookSet: v1() });
    expect(result.status).toBe('completed');
    expect(result.totals).toMatchObject({ selected: history.length, replayed: history.length, unchanged: history.length, failed: 0 });
    expect(result.changed).toBe(0);
    expect(liveTables(ledger)).toBe(before);
    const shown = showReplayRun(ledger, result.runId);
    expect(shown.changes).toEqual([]);
    // Only in-process hooks: one at a time by default, in history order.
    expect(shown.run).toMatchObject({
      status: 'completed',
      hookSet: { name: 'guardrails', version: '1' },
      baseline: null,
      options: { concurrency: 1 },
    });
    expect(ledger.sqlite.prepare('SELECT count(*) FROM replay_results WHERE run_id = ?').pluck().get(result.runId)).toBe(history.length);
  });

  it('a tightened rule newly denies exactly the expected invocations, naming the hook', async () => {
    const ledger = await recorded();
    const before = liveTables(ledger);
    const tightened = variant('2', [
      { ...hookDef('no-rm-rf'), run: (inv) => (/\brm\s/.test(command(inv)) ? deny('no rm at all', 'safety_violation') : undefined) },
    ]);
    const result = await replay({ ledger, hookSet: tightened });
    expect(result.totals).toMatchObject({ replayed: 11, newlyDenied: 2, otherReason: 2, unchanged: 7 });
    const shown = showReplayRun(ledger, result.runId);
    const newlyDenied = shown.changes.filter((c) => c.change === 'newly_denied');
    expect(newlyDenied.map((c) => c.invocationId)).toEqual([3, 11]);
    for (const c of newlyDenied) {
      expect(c).toMatchObject({ oldDecision: 'none', newDecision: 'deny', oldDecisiveHookId: null, newDecisiveHookId: 'no-rm-rf' });
      expect(c.new).toMatchObject({ reasonCode: 'safety_violation', message: 'no rm at all' });
      expect(c.hookChanges).toContainEqual(expect.objectContaining({ hookId: 'no-rm-rf', kind: 'decision' }));
      expect(c.hookChanges).toContainEqual(expect.objectContaining({ hookId: 'audit', kind: 'now_skipped' }));
    }
    expect(newlyDenied[0]!.input).toBe('{"command":"rm -r dist"}');
    expect(newlyDenied[1]).toMatchObject({ sessionId: 's-2', toolName: 'Bash' });
    // Same decision and hook, new message: decided for another reason.
    expect(shown.changes.filter((c) => c.change === 'other_reason').map((c) => c.invocationId)).toEqual([2, 7]);
    expect(liveTables(ledger)).toBe(before);
  });

  it('a loosened rule newly allows what it used to deny', async () => {
    const ledger = await recorded();
    const loosened = variant('3', [
      { ...hookDef('no-env'), run: (inv) => (filePath(inv).endsWith('.env.production') ? deny('prod secrets stay secret') : undefined) },
    ]);
    const result = await replay({ ledger, hookSet: loosened });
    const shown = showReplayRun(ledger, result.runId);
    expect(shown.changes.map((c) => [c.invocationId, c.change])).toEqual([
      [4, 'newly_allowed'],
      [10, 'other_reason'],
    ]);
    expect(shown.changes[0]).toMatchObject({
      oldDecision: 'deny',
      newDecision: 'none',
      oldDecisiveHookId: 'no-env',
      newDecisiveHookId: null,
    });
    expect(shown.changes[0]!.old).toMatchObject({ reasonCode: 'policy_violation', message: 'secrets stay secret' });
    expect(shown.changes[0]!.hookChanges).toEqual([
      expect.objectContaining({
        hookId: 'no-env',
        kind: 'decision',
        old: expect.objectContaining({ decision: 'deny', decisive: true }),
        new: expect.objectContaining({ decision: 'none', decisive: false }),
      }),
      expect.objectContaining({ hookId: 'audit', kind: 'no_longer_skipped' }),
    ]);
  });

  it('reordering by priority changes the decisive hook, not the decision', async () => {
    const ledger = await recorded();
    const reordered = variant('4', [{ ...hookDef('no-root'), priority: 5 }]);
    const result = await replay({ ledger, hookSet: reordered });
    const shown = showReplayRun(ledger, result.runId);
    expect(shown.changes.map((c) => [c.invocationId, c.change])).toEqual([[7, 'other_hook']]);
    const change = shown.changes[0]!;
    expect(change).toMatchObject({ oldDecision: 'deny', newDecision: 'deny', oldDecisiveHookId: 'no-rm-rf', newDecisiveHookId: 'no-root' });
    const kinds = Object.fromEntries(change.hookChanges!.map((h) => [h.hookId, h.kind]));
    expect(kinds).toMatchObject({ 'no-root': 'no_longer_skipped', 'no-rm-rf': 'now_skipped' });
    expect(change.outcomes!.map((o) => o.hookId)).toEqual(['no-root', 'no-rm-rf', 'confirm-force-push', 'audit', 'metrics']);
  });

  it('a hook that now times out: fail-closed denies with reason timeout, fail-open is reported as failed', async () => {
    const ledger = await recorded();
    const slow = variant('5', [
      { ...hookDef('no-env'), timeoutMs: 30, run: async (_inv, ctx) => sleepUnlessAborted(2000, ctx.signal) },
      {
        id: 'audit',
        point: ['pre_tool_use', 'user_prompt_submit'],
        timeoutMs: 30,
        run: async (inv, ctx) => (inv.point === 'user_prompt_submit' ? sleepUnlessAborted(2000, ctx.signal) : undefined),
      },
    ]);
    const result = await replay({ ledger, hookSet: slow, concurrency: 8 });
    const shown = showReplayRun(ledger, result.runId);
    expect(shown.changes.map((c) => [c.invocationId, c.change])).toEqual([
      [4, 'other_reason'],
      [5, 'newly_denied'],
      [9, 'failed'],
      [10, 'other_reason'],
    ]);
    const readme = shown.changes[1]!;
    expect(readme).toMatchObject({ newDecision: 'deny', newDecisiveHookId: 'no-env', new: { reasonCode: 'timeout' } });
    expect(readme.hookChanges).toContainEqual(expect.objectContaining({ hookId: 'no-env', kind: 'now_timing_out' }));
    expect(shown.changes[2]!.hookChanges).toEqual([expect.objectContaining({ hookId: 'audit', kind: 'now_timing_out' })]);
    expect(result.totals).toMatchObject({ failed: 1, newlyDenied: 1, otherReason: 2 });
  });

  it('passes ctx.replay = true, runs background hooks only when asked, and never writes live tables either way', async () => {
    const ledger = await recorded();
    const before = liveTables(ledger);
    const seen: boolean[] = [];
    let background = 0;
    const watching = variant('6', [
      { id: 'audit', point: ['pre_tool_use', 'user_prompt_submit'], run: (_inv, ctx) => void seen.push(ctx.replay) },
      { id: 'metrics', point: 'pre_tool_use', mode: 'background', run: () => void background++ },
    ]);
    const without = await replay({ ledger, hookSet: watching });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => r === true)).toBe(true);
    expect(background).toBe(0);
    expect(without.changed).toBe(0);
    const withBg = await replay({ ledger, hookSet: watching, withBackground: true, limit: 3 });
    // The 3 most recent: 9 (prompt: no background hook), 10 (denied: skipped), 11 (runs).
    expect(withBg.totals.selected).toBe(3);
    expect(background).toBe(1);
    expect(withBg.changed).toBe(0);
    expect(liveTables(ledger)).toBe(before);
    expect(listReplayRuns(ledger).map((r) => [r.id, r.options.withBackground])).toEqual([
      [withBg.runId, true],
      [without.runId, false],
    ]);
  });

  it('filters the selection like denials do', async () => {
    const ledger = await recorded();
    const result = await replay({ ledger, hookSet: v1(), filter: { sessionId: 's-2' } });
    expect(result.totals.selected).toBe(3);
    const denials = await replay({ ledger, hookSet: v1(), filter: { decision: 'deny', toolName: 'Bash' } });
    expect(denials.totals.selected).toBe(3);
    const shown = showReplayRun(ledger, denials.runId);
    expect(shown.run.selection).toEqual({ filter: { decision: 'deny', toolName: 'Bash' } });
  });

  it('with a baseline, flags invocations the old set no longer reproduces instead of blaming the new set', async () => {
    const { ledger } = tempLedger();
    let environment = 'ci';
    const flaky = (version: string) =>
      variant(version, [
        {
          id: 'env-check',
          point: 'pre_tool_use',
          match: 'Read',
          capability: 'guardrail',
          run: () => (environment === 'ci' ? undefined : deny('not in CI')),
        },
      ]);
    await record(ledger, flaky('1'));
    environment = 'laptop';
    const next = variant('2', [
      {
        id: 'env-check',
        point: 'pre_tool_use',
        match: 'Read',
        capability: 'guardrail',
        run: () => (environment === 'ci' ? undefined : deny('not in CI')),
      },
      { ...hookDef('confirm-force-push'), run: (inv) => (command(inv).includes('push --force') ? deny('no force push') : undefined) },
    ]);
    // Without a baseline the environment change looks like an effect of the new set.
    const naive = await replay({ ledger, hookSet: next });
    expect(naive.totals.newlyDenied).toBe(2);
    const result = await replay({ ledger, hookSet: next, baseline: flaky('1') });
    expect(result.totals).toMatchObject({ baselineMismatches: 1, newlyDenied: 1 });
    const shown = showReplayRun(ledger, result.runId);
    expect(shown.changes.map((c) => [c.invocationId, c.change])).toEqual([[6, 'newly_denied']]);
    expect(shown.baselineMismatches.map((c) => [c.invocationId, c.change, c.baselineChange])).toEqual([[5, 'unchanged', 'newly_denied']]);
    expect(shown.baselineMismatches[0]!.recorded).toMatchObject({ decision: 'none' });
    expect(shown.run.baseline).toMatchObject({ version: '1' });
  });

  it('warns that a redacted invocation was replayed with incomplete input', async () => {
    const ledger = await recorded();
    ledger.sqlite.prepare(`UPDATE invocations SET redactions_json = '["toolInput.command"]' WHERE id = 2`).run();
    const result = await replay({ ledger, hookSet: v1() });
    expect(result.totals).toMatchObject({ redacted: 1, unchanged: 11 });
    const detail = JSON.parse(
      ledger.sqlite
        .prepare('SELECT detail_json FROM replay_results WHERE run_id = ? AND invocation_id = 2')
        .pluck()
        .get(result.runId) as string,
    );
    expect(detail.warnings[0]).toMatch(/redacted before it was stored \(fields toolInput\.command\): the replayed input is incomplete/);
    expect(showReplayRun(ledger, result.runId).warningsOnUnchanged).toBe(1);
  });

  it('replays the original input, not the input as hooks modified it', async () => {
    const { ledger } = tempLedger();
    const modifying = variant('m', [
      {
        id: 'dry-run',
        point: 'pre_tool_use',
        match: 'Bash',
        capability: 'guardrail',
        priority: 1,
        run: (inv) => ({ decision: 'modify', input: { command: `${command(inv)} --dry-run` } }),
      },
    ]);
    await record(ledger, modifying, [bashCall('npm publish')]);
    const seen: string[] = [];
    const watching = variant('m2', [
      {
        id: 'dry-run',
        point: 'pre_tool_use',
        match: 'Bash',
        capability: 'guardrail',
        priority: 1,
        run: (inv) => ({ decision: 'modify', input: { command: `${command(inv)} --dry-run` } }),
      },
      { id: 'audit', point: 'pre_tool_use', priority: 0, run: (inv) => void seen.push(command(inv)) },
    ]);
    const same = await replay({ ledger, hookSet: watching });
    expect(seen).toEqual(['npm publish']);
    expect(same.changed).toBe(0);
    const other = variant('m3', [
      {
        id: 'dry-run',
        point: 'pre_tool_use',
        match: 'Bash',
        capability: 'guardrail',
        priority: 1,
        run: (inv) => ({ decision: 'modify', input: { command: `${command(inv)} --tag next` } }),
      },
    ]);
    const changed = await replay({ ledger, hookSet: other });
    expect(changed.totals.modifiedDifferently).toBe(1);
  });

  it('an interrupted replay keeps the results so far and is marked incomplete', async () => {
    const { ledger } = tempLedger();
    const many = Array.from({ length: 300 }, (_, i) => readCall(`/src/file-${i}.ts`));
    await record(ledger, v1(), many);
    const controller = new AbortController();
    const result = await replay({
      ledger,
      hookSet: v1(),
      batchSize: 50,
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done === 120) controller.abort();
      },
    });
    expect(result.status).toBe('incomplete');
    expect(result.totals.replayed).toBeGreaterThanOrEqual(100);
    expect(result.totals.replayed).toBeLessThan(300);
    const stored = ledger.sqlite.prepare('SELECT count(*) FROM replay_results WHERE run_id = ?').pluck().get(result.runId);
    expect(stored).toBe(result.totals.replayed);
    expect(showReplayRun(ledger, result.runId).run).toMatchObject({
      status: 'incomplete',
      totals: { replayed: result.totals.replayed, selected: 300 },
    });
  });

  it('keeps results in invocation order whatever the concurrency', async () => {
    const { ledger } = tempLedger();
    const many = Array.from({ length: 60 }, (_, i) => bashCall(i % 3 === 0 ? `rm -r d${i}` : `ls ${i}`));
    await record(ledger, v1(), many);
    const jittery = variant('j', [
      {
        ...hookDef('no-rm-rf'),
        run: async (inv) => {
          await new Promise((r) => setTimeout(r, Math.random() * 10));
          return /\brm\s/.test(command(inv)) ? deny('no rm') : undefined;
        },
      },
    ]);
    const result = await replay({ ledger, hookSet: jittery, concurrency: 8, batchSize: 16 });
    const ids = ledger.sqlite.prepare('SELECT invocation_id FROM replay_results WHERE run_id = ? ORDER BY id').pluck().all(result.runId);
    expect(ids).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(result.totals.newlyDenied).toBe(20);
  });
});

describe('replay edge cases', () => {
  it('a hook payload JSON cannot hold does not fail the replay', async () => {
    const { ledger } = tempLedger();
    await record(ledger, v1(), [bashCall('ls')]);
    const odd = variant('odd', [
      {
        id: 'no-rm-rf',
        point: 'pre_tool_use',
        match: 'Bash',
        capability: 'guardrail',
        run: () => deny('odd payload', 'policy_violation', { big: 1n }),
      },
    ]);
    const result = await replay({ ledger, hookSet: odd });
    expect(result.totals.newlyDenied).toBe(1);
    const [change] = showReplayRun(ledger, result.runId).changes;
    expect(change).toMatchObject({ newDecisiveHookId: 'no-rm-rf', new: { message: 'odd payload' } });
    expect(change!.warnings![0]).toMatch(/the new outcomes could not be stored/);
  });

  it('an empty selection completes with nothing replayed', async () => {
    const ledger = await recorded();
    const result = await replay({ ledger, hookSet: v1(), filter: { sessionId: 'nobody' } });
    expect(result).toMatchObject({ status: 'completed', changed: 0, totals: { selected: 0, replayed: 0 } });
  });
});

describe('replay and redaction', () => {
  const TOKEN = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
  const hooks = (extra = '') => [
    {
      id: 'needs-token',
      point: 'pre_tool_use' as const,
      capability: 'guardrail' as const,
      run: () => deny(`deploy needs an auth token: set DEPLOY_TOKEN first${extra}`, 'policy_violation', { seen: TOKEN }),
    },
    {
      id: 'inject',
      point: 'pre_tool_use' as const,
      priority: 1,
      capability: 'guardrail' as const,
      run: () => ({ decision: 'modify' as const, input: { command: 'deploy', api_key: 'internal-proxy-key-1234' } }),
    },
  ];

  it('compares with what was stored as stored: the same set is unchanged even where redaction rewrote the message or the rewrite', async () => {
    const { ledger } = tempLedger();
    const set = defineHooks({ name: 'redacting', version: '1', hooks: hooks() });
    const runner = createRunner({ hookSet: set, ledger });
    await runner.run({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'deploy' } });
    await runner.close();
    // The live path stored markers, not the values.
    const stored = ledger.sqlite.prepare('SELECT message, modified_input_json, redactions_json FROM invocations').get() as Record<
      string,
      string
    >;
    expect(stored.modified_input_json).toContain('[REDACTED:secret_field]');
    expect(stored.message).toContain('[REDACTED:');

    const same = await replay({ ledger, hookSet: set });
    expect(same.totals).toMatchObject({ replayed: 1, unchanged: 1, redacted: 0 });
    expect(same.changed).toBe(0);

    // A changed set: the stored replay detail is redacted as the live tables are.
    const changed = defineHooks({ name: 'redacting', version: '2', hooks: hooks('!') });
    const result = await replay({ ledger, hookSet: changed });
    expect(result.changed).toBe(1);
    const detail = ledger.sqlite.prepare('SELECT detail_json FROM replay_results WHERE run_id = ?').pluck().all(result.runId).join('\n');
    expect(detail).not.toContain('internal-proxy-key-1234');
    expect(detail).not.toContain(TOKEN);
  });
});
