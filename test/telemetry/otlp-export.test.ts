import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli as runCliNow, startCli } from '../cli-helpers.js';
import { tempDir, waitFor } from '../helpers.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

const SECRET = 'ghp_0123456789abcdefghijABCDEFGHIJ012345';
const fixture = readFileSync(join(import.meta.dirname, '../fixtures/claude-code/01-pretooluse-bash-rm.json'), 'utf8');

/** A hook set whose decisive hook's message carries a GitHub token (redacted by the defaults). */
function hookSet(dir: string): string {
  const file = join(dir, 'hooks.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'otel-test',
      version: '3',
      hooks: [
        { id: 'first-allow', point: 'pre_tool_use', priority: 1, capability: 'guardrail', command: 'exit 0' },
        {
          id: 'no-rm',
          point: 'pre_tool_use',
          priority: 5,
          capability: 'guardrail',
          command: `echo "rm refused; token ${SECRET}" >&2; exit 2`,
        },
        { id: 'audit', point: 'pre_tool_use', mode: 'background', capability: 'observe', command: 'exit 0' },
      ],
    }),
  );
  return file;
}

/** The CLI under a loaded machine (other suites run beside this one) may take a while to start. */
const runCli = (args: string[], options: Parameters<typeof runCliNow>[1] = {}) => runCliNow(args, { timeoutMs: 90_000, ...options });

let receiver: OtlpReceiver | null = null;
afterEach(async () => {
  await receiver?.close();
  receiver = null;
});

const otelEnv = (url: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: url,
  OTEL_SERVICE_NAME: 'hookledger-test',
  OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci,team=platform',
});

describe('OTLP export', { timeout: 180_000 }, () => {
  it('hookledger claude exports a span per invocation, a child per executed hook and a decision log record before it exits', async () => {
    receiver = await startOtlpReceiver();
    const dir = tempDir();
    const result = await runCli(['claude', '--config', hookSet(dir), '--db', join(dir, 'l.db')], {
      input: fixture,
      env: otelEnv(receiver.url),
    });
    expect(result.stderr).toBe('');
    expect(JSON.parse(result.stdout).hookSpecificOutput.permissionDecision).toBe('deny');

    // Flushed before exit: everything is already here.
    const root = receiver.spans.find((s) => s.parentSpanId === '')!;
    expect(root).toBeDefined();
    expect(root.name).toBe('hookledger pre_tool_use');
    expect(root.resource).toMatchObject({ 'service.name': 'hookledger-test', 'deployment.environment.name': 'ci', team: 'platform' });
    expect(root.attributes).toMatchObject({
      'gen_ai.tool.name': 'Bash',
      'gen_ai.tool.call.id': 'toolu_01HbQ3xk7VnR2sPq9LmA4tZc',
      'session.id': '8f3c2a1e-5b7d-4e9a-9c1f-2d6b4a8e0f13',
      'gen_ai.conversation.id': '8f3c2a1e-5b7d-4e9a-9c1f-2d6b4a8e0f13',
      'hookledger.point': 'pre_tool_use',
      'hookledger.event_name': 'PreToolUse',
      'hookledger.decision': 'deny',
      'hookledger.decisive_hook.id': 'no-rm',
      'hookledger.status': 'completed',
      'hookledger.hook_set.name': 'otel-test',
      'hookledger.hook_set.version': '3',
      'hookledger.hooks.matched': 3,
    });
    expect(root.attributes['hookledger.hook_set.fingerprint']).toMatch(/^[0-9a-f]{16,}$/);
    expect(root.attributes['hookledger.invocation.id']).toBe(1);
    expect(typeof root.attributes['hookledger.reason_code']).toBe('string');
    expect(root.attributes['hookledger.duration_us']).toBeGreaterThan(0);

    // Both foreground hooks ran (deny_wins runs every guardrail); the background one was skipped after the deny.
    const children = receiver.spans.filter((s) => s.parentSpanId === root.spanId);
    expect(children.map((s) => s.name).sort()).toEqual(['hook first-allow', 'hook no-rm']);
    for (const child of children) expect(child.traceId).toBe(root.traceId);
    const noRm = children.find((s) => s.name === 'hook no-rm')!;
    expect(noRm.attributes).toMatchObject({
      'hookledger.hook.id': 'no-rm',
      'hookledger.hook.priority': 5,
      'hookledger.hook.registration_index': 1,
      'hookledger.hook.mode': 'foreground',
      'hookledger.hook.capability': 'guardrail',
      'hookledger.hook.runtime': 'command',
      'hookledger.hook.status': 'completed',
      'hookledger.hook.decision': 'deny',
      'hookledger.hook.decisive': true,
      'gen_ai.tool.call.id': 'toolu_01HbQ3xk7VnR2sPq9LmA4tZc',
    });
    expect(noRm.attributes['hookledger.hook.duration_us']).toBeGreaterThan(0);

    // One log record per decision, in the invocation's trace.
    expect(receiver.logs).toHaveLength(1);
    const log = receiver.logs[0]!;
    expect(log).toMatchObject({ eventName: 'hookledger.decision', traceId: root.traceId, spanId: root.spanId, severityText: 'WARN' });
    expect(log.attributes).toMatchObject({
      'hookledger.decision': 'deny',
      'hookledger.decisive_hook.id': 'no-rm',
      'gen_ai.tool.name': 'Bash',
    });
    expect(log.body).toMatch(/^deny by no-rm at pre_tool_use Bash: /);

    // Redaction: the message is exported as the ledger stores it; the token went nowhere.
    expect(root.attributes['hookledger.message']).toContain('[REDACTED:github_token]');
    expect(noRm.attributes['hookledger.hook.message']).toContain('[REDACTED:github_token]');
    for (const body of receiver.bodies) expect(body).not.toContain(SECRET);
    const stored = await runCli(['explain', '1', '--db', join(dir, 'l.db'), '--json']);
    expect(JSON.parse(stored.stdout).invocation.message).toBe(root.attributes['hookledger.message']);
  });

  it('hookledger run exports background hooks as children of the invocation, and --otel overrides the environment', async () => {
    receiver = await startOtlpReceiver();
    const dir = tempDir();
    const input = JSON.stringify({
      point: 'pre_tool_use',
      toolName: 'Read',
      toolUseId: 'toolu_read',
      sessionId: 's-1',
      toolInput: { file_path: 'a' },
    });
    const allowAll = join(dir, 'allow.json');
    writeFileSync(
      allowAll,
      JSON.stringify({
        name: 'allow-all',
        hooks: [
          { id: 'ok', point: 'pre_tool_use', capability: 'guardrail', command: 'exit 0' },
          { id: 'audit', point: 'pre_tool_use', mode: 'background', capability: 'observe', command: 'sleep 0.2' },
        ],
      }),
    );
    const result = await runCli(['run', '-', '--config', allowAll, '--db', join(dir, 'l.db'), '--otel', receiver.url], {
      input,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const root = receiver.spans.find((s) => s.parentSpanId === '')!;
    expect(root.attributes).toMatchObject({ 'hookledger.decision': 'none', 'gen_ai.tool.call.id': 'toolu_read', 'session.id': 's-1' });
    const audit = receiver.spans.find((s) => s.name === 'hook audit')!;
    expect(audit.parentSpanId).toBe(root.spanId);
    expect(audit.attributes).toMatchObject({ 'hookledger.hook.mode': 'background', 'hookledger.hook.status': 'completed' });
    expect(receiver.logs.map((l) => l.attributes['hookledger.decision'])).toEqual(['none']);
  });

  it('a dead collector costs one warning line: the decision is the same and the process exits promptly', async () => {
    const port = await freePort();
    const dir = tempDir();
    const result = await runCli(['claude', '--config', hookSet(dir), '--db', join(dir, 'l.db')], {
      input: fixture,
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, HOOKLEDGER_OTEL_FLUSH_MS: '1500' },
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    // Refused connections are retried by the exporter until the flush time is up: then one line
    // saying so (the bound, not the wall-clock time of a loaded machine, is what is checked).
    expect(lines[0]).toMatch(/^hookledger: telemetry: export (failed|to .* not finished within 1500 ms).*decisions are unaffected/);
    expect(lines[0]).toContain(`127.0.0.1:${port}`);
  });

  it('serve exports what it decides and flushes on shutdown', async () => {
    receiver = await startOtlpReceiver();
    const dir = tempDir();
    const cli = startCli(
      ['serve', '--config', hookSet(dir), '--db', join(dir, 'l.db'), '--port', '0', '--token', 'a-test-token-of-16+', '--json'],
      {
        env: otelEnv(receiver.url),
      },
    );
    await waitFor(() => cli.output.stdout.includes('\n'), 90_000);
    const { url } = JSON.parse(cli.output.stdout) as { url: string };
    const response = await fetch(`${url}/claude`, {
      method: 'POST',
      headers: { authorization: 'Bearer a-test-token-of-16+' },
      body: fixture,
    });
    const answer = (await response.json()) as { hookSpecificOutput: { permissionDecision: string } };
    expect(answer.hookSpecificOutput.permissionDecision).toBe('deny');
    cli.child.kill('SIGTERM');
    expect((await cli.exited).code).toBe(0);
    expect(receiver.spans.filter((s) => s.parentSpanId === '').map((s) => s.attributes['hookledger.decision'])).toEqual(['deny']);
    expect(receiver.logs).toHaveLength(1);
  });

  it('with OTEL_SDK_DISABLED=true nothing is exported', async () => {
    receiver = await startOtlpReceiver();
    const dir = tempDir();
    const result = await runCli(['claude', '--config', hookSet(dir), '--db', join(dir, 'l.db')], {
      input: fixture,
      env: { ...otelEnv(receiver.url), OTEL_SDK_DISABLED: 'true' },
    });
    expect(result.code).toBe(0);
    expect(receiver.bodies).toEqual([]);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
