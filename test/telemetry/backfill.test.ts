import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli as runCliNow } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

const runCli = (args: string[], options: Parameters<typeof runCliNow>[1] = {}) => runCliNow(args, { timeoutMs: 90_000, ...options });
const SECRET = 'AKIAIOSFODNN7EXAMPLE';
const fixture = readFileSync(join(import.meta.dirname, '../fixtures/claude-code/01-pretooluse-bash-rm.json'), 'utf8');

const receivers: OtlpReceiver[] = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});
async function receiver(): Promise<OtlpReceiver> {
  const r = await startOtlpReceiver();
  receivers.push(r);
  return r;
}

function hookSet(dir: string): string {
  const file = join(dir, 'hooks.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'backfill',
      hooks: [
        { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', command: `echo "key ${SECRET} seen" >&2; exit 2` },
        { id: 'audit', point: 'post_tool_use', mode: 'background', capability: 'observe', command: 'exit 0' },
      ],
    }),
  );
  return file;
}

describe('hookledger export --format otlp', { timeout: 180_000 }, () => {
  it('backfills recorded invocations with the same spans and log records live export sends', async () => {
    const live = await receiver();
    const dir = tempDir();
    const db = join(dir, 'l.db');
    const hooks = hookSet(dir);
    const claude = await runCli(['claude', '--config', hooks, '--db', db], {
      input: fixture,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: live.url },
    });
    expect(claude.code).toBe(0);
    const post = JSON.stringify({ point: 'post_tool_use', toolName: 'Read', toolUseId: 'toolu_2', sessionId: 's-2', toolInput: {} });
    expect((await runCli(['run', '-', '--config', hooks, '--db', db], { input: post })).code).toBe(0);

    const backfill = await receiver();
    const result = await runCli(['export', '--format', 'otlp', '--to', backfill.url, '--db', db]);
    expect(result.stderr).toBe(`hookledger: exported 2 invocation(s) to ${backfill.url}/v1/traces, ${backfill.url}/v1/logs\n`);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');

    const roots = backfill.spans.filter((s) => s.parentSpanId === '');
    expect(roots.map((s) => s.attributes['hookledger.invocation.id'])).toEqual([1, 2]);
    // The live export of invocation 1 and its backfill carry the same attributes and timing.
    const liveRoot = live.spans.find((s) => s.parentSpanId === '')!;
    expect(roots[0]!.attributes).toEqual(liveRoot.attributes);
    expect(roots[0]!.startTimeUnixNano).toBe(liveRoot.startTimeUnixNano);
    const hookNames = (spans: typeof roots, root: (typeof roots)[number]) =>
      spans.filter((s) => s.parentSpanId === root.spanId).map((s) => ({ name: s.name, attributes: s.attributes }));
    expect(hookNames(backfill.spans, roots[0]!)).toEqual(hookNames(live.spans, liveRoot));
    expect(backfill.logs[0]!.attributes).toEqual(live.logs[0]!.attributes);
    expect(backfill.logs[0]!.body).toBe(live.logs[0]!.body);
    // The background hook of invocation 2 ran after the decision: it is in the backfill as a child.
    expect(hookNames(backfill.spans, roots[1]!)).toMatchObject([
      { name: 'hook audit', attributes: { 'hookledger.hook.mode': 'background', 'hookledger.hook.status': 'completed' } },
    ]);
    // Redacted as stored, in both.
    expect(String(roots[0]!.attributes['hookledger.message'])).toContain('[REDACTED:aws_access_key]');
    for (const body of [...live.bodies, ...backfill.bodies]) expect(body).not.toContain(SECRET);

    // A period: --since after the first invocation selects only the second.
    const period = await receiver();
    const since = new Date(Number(BigInt(roots[1]!.startTimeUnixNano) / 1_000_000n)).toISOString();
    const second = await runCli(['export', '--format', 'otlp', '--to', period.url, '--since', since, '--db', db]);
    expect(second.code).toBe(0);
    expect(period.spans.filter((s) => s.parentSpanId === '').map((s) => s.attributes['hookledger.invocation.id'])).toEqual([2]);
  });

  it('a collector that cannot be reached is one line and exit 1; --to belongs to otlp only', async () => {
    const dir = tempDir();
    const db = join(dir, 'l.db');
    expect((await runCli(['run', '-', '--config', hookSet(dir), '--db', db], { input: fixture })).code).toBe(0);
    const dead = await runCli(['export', '--format', 'otlp', '--to', 'http://127.0.0.1:9', '--db', db], {
      env: { HOOKLEDGER_OTEL_FLUSH_MS: '1500' },
    });
    expect(dead.code).toBe(1);
    const lines = dead.stderr.trim().split('\n');
    expect(lines.at(-1)).toMatch(/^hookledger: export to http:\/\/127\.0\.0\.1:9\/v1\/traces, .* failed after reading 1 invocation\(s\)/);
    expect(dead.stderr).not.toMatch(/\n\s+at /);

    const misuse = await runCli(['export', '--to', 'http://127.0.0.1:9', '--db', db]);
    expect(misuse.code).toBe(2);
    expect(misuse.stderr).toBe('hookledger: --to is for --format otlp; other formats go to stdout\n');
    const missing = await runCli(['export', '--format', 'otlp', '--db', db], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: '' } });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^hookledger: --format otlp needs --to URL/);
  });
});
