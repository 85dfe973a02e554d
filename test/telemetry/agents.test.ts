import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { startOtlpReceiver, type OtlpReceiver } from './otlp-receiver.js';

let receiver: OtlpReceiver | null = null;
afterEach(async () => {
  await receiver?.close();
  receiver = null;
});

/** Every agent command builds its runner through cli/context.ts runnerFor, and so exports. */
describe('telemetry from the other agents’ commands', { timeout: 180_000 }, () => {
  const cases = [
    {
      command: 'codex',
      payload: {
        session_id: 'codex-s1',
        turn_id: 't-1',
        cwd: '/work/app',
        hook_event_name: 'PreToolUse',
        tool_name: 'shell',
        tool_input: { command: ['rm', '-rf', '/'] },
        tool_use_id: 'call-1',
      },
      agent: 'codex',
    },
    {
      command: 'gemini',
      payload: {
        session_id: 'gemini-s1',
        cwd: '/work/app',
        hook_event_name: 'BeforeTool',
        tool_name: 'run_shell_command',
        tool_input: { command: 'rm -rf /' },
      },
      agent: 'gemini-cli',
    },
    {
      command: 'meerkat',
      payload: {
        point: 'pre_tool_execution',
        session_id: '0193f6c2-7d1e-7b55-9a51-3f0c2a9e4d10',
        turn_number: 3,
        tool_call: { tool_use_id: 'call_7', name: 'shell', args: { command: 'rm -rf /' } },
      },
      agent: 'meerkat',
      tool: 'shell',
    },
  ];
  for (const c of cases) {
    it(`hookledger ${c.command} --otel exports its decision`, async () => {
      receiver = await startOtlpReceiver();
      const dir = tempDir();
      const hooks = join(dir, 'hooks.json');
      writeFileSync(
        hooks,
        JSON.stringify({
          name: 'agents',
          hooks: [{ id: 'no-rm', point: 'pre_tool_use', capability: 'guardrail', command: 'echo no >&2; exit 2' }],
        }),
      );
      const result = await runCli([c.command, '--config', hooks, '--db', join(dir, 'l.db'), '--otel', receiver.url], {
        input: JSON.stringify(c.payload),
        timeoutMs: 90_000,
      });
      expect(result.stderr).not.toMatch(/telemetry/);
      const root = receiver.spans.find((s) => s.parentSpanId === '');
      expect(root?.attributes).toMatchObject({
        'hookledger.decision': 'deny',
        'hookledger.decisive_hook.id': 'no-rm',
        'hookledger.agent': c.agent,
        'session.id': c.payload.session_id,
        'gen_ai.tool.name': 'tool' in c ? c.tool : c.payload.tool_name,
      });
      expect(receiver.logs).toHaveLength(1);
    });
  }
});
