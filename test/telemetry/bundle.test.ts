import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildClaudeBundle, packageRootDir } from '../../scripts/build-bundle.js';
import { tempDir } from '../helpers.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

let receiver: OtlpReceiver | null = null;
afterEach(async () => {
  await receiver?.close();
  receiver = null;
});

describe('telemetry and the claude bundle', { timeout: 120_000 }, () => {
  it('keeps OpenTelemetry out of the bundle that starts on every event', async () => {
    const dir = tempDir();
    const launcher = await buildClaudeBundle(join(dir, 'dist', 'bundle', 'claude.cjs'));
    const code = readFileSync(launcher.replace(/\.cjs$/, '-bundle.cjs'), 'utf8');
    expect(code).not.toMatch(/@opentelemetry|OTLPTraceExporter|BatchSpanProcessor|TracerProvider|prom-client/);
    // The cheap part is in it: the settings, the sink and the path to the lazily loaded module.
    expect(code).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    expect(code).toContain('telemetry/otlp.js');
  });

  it('no agent bundle in dist/bundle (built by npm run build) contains the SDK', () => {
    const dir = join(packageRootDir, 'dist', 'bundle');
    const bundles = readdirSync(dir).filter((f) => f.endsWith('.cjs'));
    expect(bundles).toContain('claude.cjs');
    for (const file of bundles)
      expect(readFileSync(join(dir, file), 'utf8')).not.toMatch(/@opentelemetry|OTLPTraceExporter|TracerProvider|prom-client/);
  });

  it('the built bundle loads dist/telemetry when telemetry is configured, and exports before exiting', async () => {
    // Built by `npm run build` (npm test builds first).
    const launcher = join(packageRootDir, 'dist', 'bundle', 'claude.cjs');
    receiver = await startOtlpReceiver();
    const dir = tempDir();
    const hooks = join(dir, 'hooks.json');
    writeFileSync(
      hooks,
      JSON.stringify({ name: 'b', hooks: [{ id: 'block', point: 'pre_tool_use', capability: 'guardrail', command: 'exit 2' }] }),
    );
    const input = readFileSync(join(import.meta.dirname, '../fixtures/claude-code/01-pretooluse-bash-rm.json'));
    // Not spawnSync: the receiver runs in this process and must answer meanwhile.
    const child = spawn(process.execPath, [launcher, '--config', hooks, '--db', join(dir, 'b.db')], {
      env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdin.end(input);
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(JSON.parse(stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(receiver.spans.map((s) => s.name).sort()).toEqual(['hook block', 'hookledger pre_tool_use']);
    expect(receiver.logs.map((l) => l.attributes['hookledger.decisive_hook.id'])).toEqual(['block']);
  });
});
