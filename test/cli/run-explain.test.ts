import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

const config = `import { defineHooks, deny } from '${join(import.meta.dirname, '../../src/index.js')}';
export default defineHooks({ name: 'cli-test', version: '2', hooks: [
  { id: 'no-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail',
    run: (inv) => String((inv.toolInput as { command?: string }).command).includes('rm -rf') ? deny('rm -rf is not allowed', 'safety_violation') : undefined },
  { id: 'watch', point: 'pre_tool_use', run: () => undefined },
] });
`;

describe('hookledger run / explain', () => {
  it('decides an invocation from stdin, records it, and explains it by id and tool_use_id', async () => {
    const dir = tempDir();
    const db = join(dir, 'l.db');
    writeFileSync(join(dir, 'hooks.ts'), config);
    const invocation = {
      point: 'pre_tool_use',
      sessionId: 's-1',
      toolName: 'Bash',
      toolUseId: 'toolu_42',
      toolInput: { command: 'rm -rf /' },
    };
    const run = await runCli(['run', '--config', join(dir, 'hooks.ts'), '--db', db, '--json'], { input: JSON.stringify(invocation) });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ decision: 'deny', decisiveHookId: 'no-rm', reasonCode: 'safety_violation' });

    const text = await runCli(['explain', 'toolu_42', '--db', db]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('DENY');
    expect(text.stdout).toContain('decided by no-rm [safety_violation]: rm -rf is not allowed');
    expect(text.stdout).toContain('cli-test@2');
    expect(text.stdout).toMatch(/watch .*skipped \(pass_ended by no-rm\)/);

    const json = await runCli(['explain', String(report.invocationId), '--db', db, '--json']);
    expect(JSON.parse(json.stdout).outcomes).toEqual(report.outcomes);
  });

  it('accepts a Claude Code payload as the invocation', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.ts'), config);
    const fixture = join(import.meta.dirname, '../fixtures/claude-code/01-pretooluse-bash-rm.json');
    const run = await runCli(['run', fixture, '--config', join(dir, 'hooks.ts'), '--db', join(dir, 'l.db')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^DENY\s+pre_tool_use/);
  });

  it.each([
    [['run', '--db', 'x.db'], '{"point":"pre_tool_use"}', 2, /--config PATH is required/],
    [['run', '--config', 'nope.json'], '{"point":"pre_tool_use"}', 2, /nope\.json: config file not found/],
    [['frobnicate'], '', 2, /unknown command "frobnicate"/],
    [['explain', '--bogus'], '', 2, /explain: Unknown option '--bogus'/],
  ])('bad usage %j (stdin %s) gives one clear line and exit %i', async (args, input, code, message) => {
    const dir = tempDir();
    const result = await runCli(args as string[], { input: input as string, cwd: dir });
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message as RegExp);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('a malformed invocation names the field; nothing is recorded', async () => {
    const dir = tempDir();
    const db = join(dir, 'l.db');
    writeFileSync(join(dir, 'hooks.ts'), config);
    const bad = await runCli(['run', '--config', join(dir, 'hooks.ts'), '--db', db], { input: '{"point":"pre_tool_use","turn":"three"}' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^hookledger: stdin: turn: /);
    const notJson = await runCli(['run', '--config', join(dir, 'hooks.ts'), '--db', db], { input: '{"point":' });
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toMatch(/^hookledger: stdin: not valid JSON/);
    const unknownPoint = await runCli(['run', '--config', join(dir, 'hooks.ts'), '--db', db], { input: '{"point":"pre_tool"}' });
    expect(unknownPoint.stderr).toMatch(/point: unknown point "pre_tool"/);
    const missing = await runCli(['explain', '1', '--db', db]);
    expect(missing.code).toBe(4);
  });
});

describe('one-line errors', () => {
  it('a JSON error quoting multi-line input is still one line', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.ts'), config);
    const result = await runCli(['run', '--config', join(dir, 'hooks.ts'), '--db', join(dir, 'l.db')], {
      input: '{\n  "point":\n  "pre_tool_use",\n  oops\n}',
    });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^hookledger: stdin: not valid JSON/);
  });
});
