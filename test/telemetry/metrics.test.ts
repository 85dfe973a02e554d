import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { afterEach, describe, expect, it } from 'vitest';
import { startCli, type StartedCli } from '../cli-helpers.js';
import { tempDir, waitFor } from '../helpers.js';

const TOKEN = 'metrics-test-token-0123';
let serve: StartedCli | null = null;
afterEach(async () => {
  serve?.child.kill('SIGTERM');
  await serve?.exited;
  serve = null;
});

function family(families: ParsedFamily[], name: string): ParsedFamily {
  const found = families.find((f) => f.name === name);
  if (!found) throw new Error(`no metric ${name} in ${families.map((f) => f.name).join(', ')}`);
  return found;
}

/**
 * The samples of one series (`name_bucket`, `name_count`, `name_sum`) with their labels. The
 * parser folds a histogram's samples into one unlabelled entry, losing labelled histograms'
 * series; read as untyped, each sample keeps its labels.
 */
function series(text: string, name: string): ParsedFamily['metrics'] {
  const untyped = text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped');
  // prom-client writes each label set's buckets, sum and count together, so a series comes in runs.
  return parsePrometheusTextFormat(untyped)
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics);
}

describe('serve GET /metrics', { timeout: 180_000 }, () => {
  it('counts decisions, hook durations, failures and timeouts in Prometheus text format, behind the token', async () => {
    const dir = tempDir();
    const hooks = join(dir, 'hooks.json');
    writeFileSync(
      hooks,
      JSON.stringify({
        name: 'metrics',
        hooks: [
          { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', command: 'grep -q "rm -rf" && exit 2; exit 0' },
          {
            id: 'slow',
            point: 'pre_tool_use',
            match: 'Read',
            capability: 'guardrail',
            timeoutMs: 100,
            onFailure: 'allow',
            command: 'sleep 5',
          },
          { id: 'broken', point: 'post_tool_use', capability: 'observe', mode: 'background', command: 'exit 7' },
        ],
      }),
    );
    serve = startCli(['serve', '--config', hooks, '--db', join(dir, 'l.db'), '--port', '0', '--token', TOKEN, '--json']);
    await waitFor(() => serve!.output.stdout.includes('\n'), 90_000);
    const { url } = JSON.parse(serve.output.stdout) as { url: string };
    const post = (body: unknown) =>
      fetch(`${url}/v1/invocations`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify(body) }).then(
        (r) => r.json(),
      );
    await post({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'rm -rf /' } });
    await post({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'ls' } });
    await post({ point: 'pre_tool_use', toolName: 'Read', toolInput: { file_path: 'x' } });
    await post({ point: 'post_tool_use', toolName: 'Read', toolInput: { file_path: 'x' } });

    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const scrape = async () => {
      const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      text = await response.text();
      return parsePrometheusTextFormat(text);
    };
    let text = '';
    // The background hook's failure is counted when it has finished.
    let families = await scrape();
    for (
      let i = 0;
      i < 50 && !families.some((f) => f.name === 'hookledger_hook_failures_total' && f.metrics.some((m) => m.labels?.hook === 'broken'));
      i++
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      families = await scrape();
    }

    const decisions = family(families, 'hookledger_decisions_total');
    expect(decisions.type).toBe('COUNTER');
    const count = (labels: Record<string, string>) =>
      Number(decisions.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value ?? 0);
    expect(count({ point: 'pre_tool_use', decision: 'deny', hook: 'no-rm' })).toBe(1);
    expect(count({ point: 'pre_tool_use', decision: 'none', hook: '' })).toBe(2);
    expect(count({ point: 'post_tool_use', decision: 'none' })).toBe(1);
    expect(decisions.metrics.find((m) => m.labels?.decision === 'deny')?.labels?.reason).toBe('policy_violation');

    expect(family(families, 'hookledger_hook_duration_seconds').type).toBe('HISTOGRAM');
    const hookCounts = series(text, 'hookledger_hook_duration_seconds_count');
    expect(hookCounts.filter((m) => m.labels?.hook === 'no-rm').reduce((n, m) => n + Number(m.value), 0)).toBe(2);
    expect(hookCounts.find((m) => m.labels?.hook === 'slow')).toMatchObject({
      value: '1',
      labels: { status: 'timed_out', mode: 'foreground' },
    });
    const slowBuckets = series(text, 'hookledger_hook_duration_seconds_bucket').filter((m) => m.labels?.hook === 'slow');
    // Timed out at 100 ms: not in the 50 ms bucket, in the 250 ms one.
    expect(slowBuckets.find((m) => m.labels?.le === '0.05')?.value).toBe('0');
    expect(slowBuckets.find((m) => m.labels?.le === '+Inf')?.value).toBe('1');

    const timeouts = family(families, 'hookledger_hook_timeouts_total');
    expect(timeouts.metrics.find((m) => m.labels?.hook === 'slow')?.value).toBe('1');
    const failures = family(families, 'hookledger_hook_failures_total');
    expect(failures.metrics.find((m) => m.labels?.hook === 'slow')?.labels?.reason).toBe('timeout');
    expect(failures.metrics.find((m) => m.labels?.hook === 'broken')).toMatchObject({
      value: '1',
      labels: { mode: 'background', reason: 'execution_failed' },
    });

    expect(family(families, 'hookledger_ledger_write_duration_seconds').type).toBe('HISTOGRAM');
    expect(series(text, 'hookledger_ledger_write_duration_seconds_count').find((m) => m.labels?.record === 'invocation')?.value).toBe('4');
    expect(
      Number(series(text, 'hookledger_ledger_write_duration_seconds_sum').find((m) => m.labels?.record === 'invocation')?.value),
    ).toBeGreaterThan(0);
    expect(family(families, 'hookledger_background_queue_depth')).toMatchObject({ type: 'GAUGE', metrics: [{ value: '0' }] });
    // prom-client's process metrics come along.
    expect(families.some((f) => f.name === 'process_cpu_user_seconds_total')).toBe(true);
  });
});
