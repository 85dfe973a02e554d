import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import type { InvocationInput } from '../../src/domain/invocation.js';
import { deny } from '../../src/domain/results.js';
import { createRunner } from '../../src/runner/runner.js';
import { runCli as run } from '../cli-helpers.js';
import { tempLedger } from '../helpers.js';

// Each call starts the CLI; a loaded machine must not turn a slow start into a failure.
const runCli = (args: string[]) => run(args, { timeoutMs: 120_000 });
const index = join(import.meta.dirname, '../../src/index.js');

/** One denied and one allowed Bash call per agent, in sessions named after the agent. */
async function agentsLedger() {
  const { ledger, path, dir } = tempLedger();
  const hookSet = defineHooks({
    name: 'agents',
    version: '1',
    hooks: [
      {
        id: 'no-rm',
        point: 'pre_tool_use',
        capability: 'guardrail',
        run: (inv) => (String((inv.toolInput as { command?: string }).command).includes('rm') ? deny('no rm') : undefined),
      },
    ],
  });
  const runner = createRunner({ hookSet, ledger });
  const agents = ['claude-code', 'claude-code/Explore', 'codex', 'gemini-cli', 'meerkat', 'codex-like'];
  for (const agent of agents) {
    for (const command of ['rm -rf x', 'ls']) {
      const input: InvocationInput = { point: 'pre_tool_use', sessionId: `s-${agent}`, toolName: 'Bash', toolInput: { command }, agent };
      await runner.run(input);
    }
  }
  await runner.close();
  ledger.close();
  writeFileSync(
    join(dir, 'hooks.ts'),
    `import { defineHooks } from '${index}';\nexport default defineHooks({ name: 'none', version: '1', hooks: [] });\n`,
  );
  return { path, config: join(dir, 'hooks.ts') };
}

describe('--agent and --host filters (CLI)', { timeout: 600_000 }, () => {
  it('denials, sessions, export and replay select one agent (with its subagents) and one host', async () => {
    const { path, config } = await agentsLedger();
    const denied = async (...flags: string[]) => {
      const out = await runCli(['denials', '--db', path, '--json', ...flags]);
      expect(out.stderr).toBe('');
      return (JSON.parse(out.stdout).rows as { sessionId: string }[]).map((r) => r.sessionId).sort();
    };
    expect(await denied('--agent', 'codex')).toEqual(['s-codex']);
    expect(await denied('--agent', 'claude-code')).toEqual(['s-claude-code', 's-claude-code/Explore']);
    expect(await denied('--agent', 'claude-code/Explore')).toEqual(['s-claude-code/Explore']);
    expect(await denied('--agent', 'gemini-cli')).toEqual(['s-gemini-cli']);
    expect(await denied('--agent', 'nobody')).toEqual([]);
    expect(await denied('--host', hostname())).toHaveLength(6);
    expect(await denied('--host', `not-${hostname()}`)).toEqual([]);
    expect(await denied('--agent', 'meerkat', '--host', hostname())).toEqual(['s-meerkat']);

    const sessions = JSON.parse((await runCli(['sessions', '--db', path, '--json', '--agent', 'gemini-cli'])).stdout);
    expect(sessions.rows.map((r: { sessionId: string }) => r.sessionId)).toEqual(['s-gemini-cli']);
    expect(sessions.rows[0]).toMatchObject({ invocations: 2 });

    const exported = await runCli(['export', '--db', path, '--agent', 'codex']);
    const lines = exported.stdout
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { agent: string });
    expect(lines.map((l) => l.agent)).toEqual(['codex', 'codex']);
    const csv = await runCli(['export', '--db', path, '--format', 'csv', '--host', `not-${hostname()}`]);
    expect(csv.stdout.trimEnd().split('\r\n')).toHaveLength(1);

    const replayed = JSON.parse((await runCli(['replay', '--config', config, '--db', path, '--agent', 'meerkat', '--json'])).stdout);
    expect(replayed.run.totals).toMatchObject({ replayed: 2 });
  });

  it('denials, sessions, explain and replay show every agent side by side', async () => {
    const { path, config } = await agentsLedger();
    const replayed = (await runCli(['replay', '--config', config, '--db', path, '--all'])).stdout;
    for (const agent of ['codex', 'gemini-cli', 'meerkat'])
      expect(replayed).toContain(`session s-${agent}  ${agent}  Bash  {"command":"rm -rf x"}`);
    expect((await runCli(['replay', '--config', config, '--db', path, '--agent', 'codex'])).stdout).toContain('agent codex');
    const text = (await runCli(['denials', '--db', path])).stdout;
    expect(text).toMatch(/^ID\s+WHEN \(UTC\)\s+SESSION\s+AGENT\s+TOOL\s+HOOK\n/);
    for (const agent of ['codex', 'gemini-cli', 'meerkat', 'claude-code']) expect(text).toMatch(new RegExp(`\\s${agent}\\s+Bash\\s+no-rm`));
    const groups = JSON.parse((await runCli(['denials', '--db', path, '--group-by', 'agent', '--json'])).stdout);
    expect(groups.groups.map((g: { key: string }) => g.key).sort()).toEqual([
      'claude-code',
      'claude-code/Explore',
      'codex',
      'codex-like',
      'gemini-cli',
      'meerkat',
    ]);
    const timeline = (await runCli(['sessions', 's-gemini-cli', '--db', path])).stdout;
    expect(timeline).toMatch(/^Session s-gemini-cli {2}\(gemini-cli\)\n/);
    const sessions = JSON.parse((await runCli(['sessions', '--db', path, '--json'])).stdout);
    expect(sessions.rows.find((r: { sessionId: string }) => r.sessionId === 's-codex').agents).toEqual(['codex']);
    const denial = JSON.parse((await runCli(['denials', '--db', path, '--agent', 'codex', '--json'])).stdout).rows[0];
    expect(denial.agent).toBe('codex');
    expect((await runCli(['explain', String(denial.invocationId), '--db', path])).stdout).toMatch(/\n {2}agent {5}codex\n/);
  });

  it('an empty --agent is one clear line', async () => {
    const { path } = await agentsLedger();
    const out = await runCli(['denials', '--db', path, '--agent', ' ']);
    expect(out.code).not.toBe(0);
    expect(out.stderr).toBe('hookledger: --agent: must not be empty\n');
  });
});
