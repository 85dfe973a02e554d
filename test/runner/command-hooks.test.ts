import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { explain } from '../../src/ledger/queries/explain.js';
import { eventually, fixture, groupGone, processGone } from '../runtimes/helpers.js';
import { bash, setup, tempDir } from '../helpers.js';

/** Command hooks through the whole runner: what each protocol case leaves in the ledger. */
describe('command hooks through the runner', () => {
  const guard = (id: string, script: string, extra: Record<string, unknown> = {}) => ({
    id,
    point: 'pre_tool_use' as const,
    capability: 'guardrail' as const,
    command: { command: script.endsWith('.py') ? 'python3' : 'bash', args: [fixture(script)] },
    ...extra,
  });

  it('exit 0 silent: no opinion, completed', async () => {
    const { runner } = setup([guard('silent', 'silent.sh')]);
    const report = await runner.run(bash('ls'));
    expect(report.decision).toBe('none');
    expect(report.outcomes[0]).toMatchObject({ runtime: 'command', status: 'completed', decision: 'none' });
  });

  it('exit 0 with deny JSON: the decisive deny with the reason from stdout', async () => {
    const { runner, ledger } = setup([guard('json-deny', 'deny-json.py')]);
    const report = await runner.run(bash('rm -rf /'));
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'json-deny', message: 'refusing to run: rm -rf /' });
    expect(explain(ledger, report.invocationId).decisive).toMatchObject({ runtime: 'command', decision: 'deny' });
  });

  it('exit 2: deny with stderr as the reason', async () => {
    const { runner } = setup([guard('exit2', 'exit2.sh')]);
    const report = await runner.run(bash('rm -rf /'));
    expect(report).toMatchObject({ decision: 'deny', reasonCode: 'policy_violation', message: 'rm -rf is not allowed here' });
  });

  it('exit 1: execution_failed with the exit code and stderr; fail-closed guardrail denies with runtime_error', async () => {
    const { runner } = setup([guard('exit1', 'exit1.sh'), guard('exit1-open', 'exit1.sh', { onFailure: 'allow', priority: 1 })]);
    const report = await runner.run(bash('ls'));
    expect(report.outcomes[0]).toMatchObject({
      hookId: 'exit1-open',
      status: 'failed',
      failureReason: 'execution_failed',
      decisive: false,
    });
    expect(report.outcomes[0]!.failureDetail).toMatch(/exited with code 1/);
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'exit1', reasonCode: 'runtime_error' });
  });

  it('garbage stdout: invalid_result', async () => {
    const { runner } = setup([guard('garbage', 'garbage.sh', { onFailure: 'allow' })]);
    const report = await runner.run(bash('ls'));
    expect(report.outcomes[0]).toMatchObject({ status: 'failed', failureReason: 'invalid_result' });
    expect(report.outcomes[0]!.failureDetail).toMatch(/not valid JSON/);
    expect(report.decision).toBe('none');
  });

  it('a hang past its timeout: timed_out near the limit, deny with reason timeout, and the process group is gone', async () => {
    const pidFile = join(tempDir(), 'pids');
    const { runner } = setup([
      {
        // Long enough for python to start and record its pids on a loaded machine (at 400 ms it raced).
        ...guard('hang', 'hang.py', { timeoutMs: 2000 }),
        command: { command: 'python3', args: [fixture('hang.py')], env: { PID_FILE: pidFile } },
      },
    ]);
    const report = await runner.run(bash('ls'));
    expect(report).toMatchObject({ decision: 'deny', reasonCode: 'timeout', decisiveHookId: 'hang' });
    expect(report.outcomes[0]).toMatchObject({ status: 'timed_out', failureReason: 'timeout', timeoutMs: 2000 });
    expect(report.outcomes[0]!.durationUs).toBeGreaterThanOrEqual(1_990_000);
    expect(report.outcomes[0]!.durationUs).toBeLessThan(10_000_000);
    const [pid, pgid, child] = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number, number];
    expect(await eventually(() => groupGone(pgid) && processGone(pid) && processGone(child), 5000)).toBe(true);
  });
});
