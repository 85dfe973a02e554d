import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildClaudeBundle } from '../../scripts/build-bundle.js';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

const fixture = join(import.meta.dirname, '../fixtures/claude-code/01-pretooluse-bash-rm.json');

describe('the single-file claude bundle', () => {
  it('answers like `hookledger claude`, and writes then reuses its V8 code cache', async () => {
    const dir = tempDir();
    const launcher = await buildClaudeBundle(join(dir, 'dist', 'bundle', 'claude.mjs'));
    // The bundle finds migrations/ at the package root, two levels above it, and requires
    // better-sqlite3 (native, not bundled) from node_modules there.
    for (const name of ['migrations', 'node_modules']) symlinkSync(join(import.meta.dirname, '../..', name), join(dir, name));
    const hooks = join(dir, 'hooks.json');
    writeFileSync(
      hooks,
      JSON.stringify({
        name: 'b',
        hooks: [{ id: 'block', point: 'pre_tool_use', capability: 'guardrail', command: `echo "no rm" >&2; exit 2` }],
      }),
    );
    const input = readFileSync(fixture);
    const run = () => spawnSync(process.execPath, [launcher, '--config', hooks, '--db', join(dir, 'b.db')], { input, encoding: 'utf8' });

    const first = run();
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(existsSync(`${launcher.replace(/\.mjs$/, '.cjs')}.cache`)).toBe(true);
    const second = run();
    expect(second.status).toBe(0);
    const answer = JSON.parse(second.stdout);
    expect(answer.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
    expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(/denied by block .*no rm/);

    const cli = await runCli(['claude', '--config', hooks, '--db', join(dir, 'c.db')], { input: input.toString() });
    const viaCli = JSON.parse(cli.stdout);
    // Same answer but for the invocation id named in the reason.
    const strip = (a: { hookSpecificOutput: { permissionDecisionReason: string } }) =>
      a.hookSpecificOutput.permissionDecisionReason.replace(/explain \d+/, 'explain N');
    expect(strip(answer)).toBe(strip(viaCli));
  });
});
