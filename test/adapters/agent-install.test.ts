import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { runCli as run } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

// Each call starts the CLI; a loaded machine must not turn a slow start into a failure.
const runCli = (args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) => run(args, { timeoutMs: 120_000, ...options });
const WIRE_HOOKS = join(import.meta.dirname, '../fixtures/agents/wire-hooks.mjs');

/** A project with a hook set whose pre_tool_use hooks need 15 minutes in a row. */
function project(): { dir: string; home: string; config: string } {
  const dir = tempDir();
  const home = tempDir();
  const config = join(dir, 'hooks.json');
  writeFileSync(
    config,
    JSON.stringify({
      name: 'p',
      version: '1',
      hooks: [{ id: 'slow-scan', point: 'pre_tool_use', capability: 'guardrail', timeoutMs: 900_000, command: 'true' }],
    }),
  );
  return { dir, home, config };
}

/** Runs the command an agent would run for a handler, with the payload on stdin. */
function runHandler(command: string, payload: unknown, env: NodeJS.ProcessEnv = {}): string {
  return execFileSync('/bin/sh', ['-c', command], { input: JSON.stringify(payload), env: { ...process.env, ...env }, encoding: 'utf8' });
}

describe('install-codex, install-gemini, import-codex, import-gemini', { timeout: 600_000 }, () => {
  it('install-codex: hooks.json keeps every other key and handler, sizes timeouts in seconds, is idempotent, prints, removes', async () => {
    const { dir, home, config } = project();
    const file = join(dir, '.codex/hooks.json');
    mkdirSync(join(dir, '.codex'));
    const original = {
      $schema: 'https://example.com/codex-hooks.json',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh', timeout: 5 }] }] },
    };
    writeFileSync(file, `${JSON.stringify(original, null, 2)}\n`);
    const env = { HOME: home };

    const first = await runCli(['install-codex', '--config', config], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(
      `${file}: hookledger handles PreToolUse, PermissionRequest, PostToolUse, PreCompact, SessionStart, SessionEnd, UserPromptSubmit, SubagentStop, Stop`,
    );
    expect(first.stdout).toContain('Codex asks you to review and trust new or changed hooks once');
    expect(first.stdout).toContain('1 other hook handler(s) in this file still run beside hookledger; `hookledger import-codex');
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written.$schema).toBe(original.$schema);
    expect(written.hooks.PreToolUse[0]).toEqual(original.hooks.PreToolUse[0]);
    const ours = written.hooks.PreToolUse[1];
    expect(ours).toMatchObject({
      matcher: '*',
      hooks: [{ type: 'command', command: expect.stringMatching(/ codex --config /), timeout: 902 }],
    });
    expect(written.hooks.Stop[0].hooks[0].timeout).toBe(600);

    const bytes = readFileSync(file, 'utf8');
    const again = await runCli(['install-codex', '--config', config], { cwd: dir, env });
    expect(again.stdout).toMatch(new RegExp(`^${file}: already up to date\n`));
    expect(readFileSync(file, 'utf8')).toBe(bytes);

    // The command written is one that works: Codex would get a strict deny from it.
    const answer = runHandler(ours.hooks[0].command.replace(config, WIRE_HOOKS), {
      hook_event_name: 'PreToolUse',
      session_id: 's',
      tool_name: 'shell',
      tool_input: { command: 'rm -rf /' },
    });
    expect(JSON.parse(answer).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });

    const printed = await runCli(['install-codex', '--config', config, '--events', 'PreToolUse', '--print'], { cwd: dir, env });
    expect(Object.keys(JSON.parse(printed.stdout).hooks)).toEqual(['PreToolUse']);
    expect(readFileSync(file, 'utf8')).toBe(bytes);

    const removed = await runCli(['install-codex', '--remove'], { cwd: dir, env });
    expect(removed.stdout).toMatch(/removed from PreToolUse, /);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(original);
  });

  it('install-codex --toml: a marked block at the end of config.toml, the rest byte for byte', async () => {
    const { dir, home, config } = project();
    const file = join(home, '.codex/config.toml');
    mkdirSync(join(home, '.codex'));
    const original = `# my Codex settings\nmodel = "gpt-5-codex"\n\n[projects."/work"]\ntrust_level = "trusted"\n\n[[hooks.PreToolUse]]\nmatcher = "Bash"\n[[hooks.PreToolUse.hooks]]\ntype = "command"\ncommand = "./guard.sh"\n`;
    writeFileSync(file, original);
    const env = { HOME: home };
    const first = await runCli(['install-codex', '--user', '--toml', '--config', config, '--events', 'PreToolUse,Stop'], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith(original.trimEnd())).toBe(true);
    const parsed = parseToml(text) as {
      model: string;
      hooks: Record<string, { matcher: string; hooks: { command: string; timeout: number }[] }[]>;
    };
    expect(parsed.model).toBe('gpt-5-codex');
    expect(parsed.hooks.PreToolUse).toHaveLength(2);
    expect(parsed.hooks.PreToolUse![0]!.hooks[0]!.command).toBe('./guard.sh');
    expect(parsed.hooks.PreToolUse![1]).toMatchObject({
      matcher: '*',
      hooks: [{ timeout: 902, command: expect.stringContaining(' codex --config ') }],
    });
    expect(
      (await runCli(['install-codex', '--user', '--toml', '--config', config, '--events', 'PreToolUse,Stop'], { cwd: dir, env })).stdout,
    ).toContain('already up to date');
    expect(readFileSync(file, 'utf8')).toBe(text);
    await runCli(['install-codex', '--user', '--toml', '--remove'], { cwd: dir, env });
    expect(readFileSync(file, 'utf8')).toBe(original);

    writeFileSync(file, 'hooks = { PreToolUse = [] }\n');
    const inline = await runCli(['install-codex', '--user', '--toml', '--config', config], { cwd: dir, env });
    expect(inline.code).toBe(2);
    expect(inline.stderr).toMatch(/^hookledger: .*config\.toml: /);
    expect(inline.stderr.trim().split('\n')).toHaveLength(1);
    expect(readFileSync(file, 'utf8')).toBe('hooks = { PreToolUse = [] }\n');
  });

  it('install-gemini: settings.json comments and keys kept, ms timeouts, $GEMINI_PROJECT_DIR paths, warnings', async () => {
    const { dir, home, config } = project();
    const file = join(dir, '.gemini/settings.json');
    mkdirSync(join(dir, '.gemini'));
    const original = `{\n  // the user's theme\n  "theme": "GitHub",\n  "hooksConfig": { "enabled": false },\n  "hooks": {\n    "BeforeTool": [{ "matcher": "write_file", "hooks": [{ "type": "command", "command": "./check.sh", "timeout": 3000 }] }]\n  }\n}\n`;
    writeFileSync(file, original);
    const env = { HOME: home };
    const first = await runCli(['install-gemini', '--config', config], { cwd: dir, env });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('hooksConfig.enabled is false');
    expect(first.stdout).toContain(
      'hookledger handles BeforeTool, AfterTool, BeforeAgent, AfterAgent, BeforeModel, AfterModel, SessionStart, SessionEnd, PreCompress, Notification',
    );
    const text = readFileSync(file, 'utf8');
    expect(text).toContain("// the user's theme");
    const { parse } = await import('jsonc-parser');
    const settings = parse(text);
    expect(settings.theme).toBe('GitHub');
    expect(settings.hooks.BeforeTool[0].hooks[0].command).toBe('./check.sh');
    const ours = settings.hooks.BeforeTool[1].hooks[0];
    expect(ours).toMatchObject({
      type: 'command',
      name: 'hookledger',
      timeout: 902_000,
      command: expect.stringContaining(' gemini --config "$GEMINI_PROJECT_DIR/hooks.json"'),
    });
    expect(settings.hooks.SessionEnd[0].hooks[0].timeout).toBe(60_000);
    expect((await runCli(['install-gemini', '--config', config], { cwd: dir, env })).stdout).toContain('already up to date');
    expect(readFileSync(file, 'utf8')).toBe(text);

    const answer = runHandler(ours.command.replace('"$GEMINI_PROJECT_DIR/hooks.json"', WIRE_HOOKS), {
      hook_event_name: 'BeforeTool',
      session_id: 's',
      tool_name: 'run_shell_command',
      tool_input: { command: 'rm -rf /' },
    });
    expect(JSON.parse(answer)).toMatchObject({ decision: 'deny' });

    const user = await runCli(['install-gemini', '--user', '--config', config, '--events', 'BeforeTool'], { cwd: dir, env });
    expect(user.code, user.stderr).toBe(0);
    const userSettings = JSON.parse(readFileSync(join(home, '.gemini/settings.json'), 'utf8'));
    expect(userSettings.hooks.BeforeTool[0].hooks[0].command).toContain(` gemini --config ${config}`);

    await runCli(['install-gemini', '--remove'], { cwd: dir, env });
    expect(parse(readFileSync(file, 'utf8'))).toEqual(parse(original));
    const bad = await runCli(['install-gemini', '--config', config, '--events', 'beforetool'], { cwd: dir, env });
    expect(bad.stderr).toMatch(/^hookledger: --events: "beforetool" is not a Gemini CLI event \(did you mean BeforeTool\?\)/);
  });

  it('import-codex and import-gemini report what cannot be imported', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'hooks.json'),
      JSON.stringify({
        hooks: {
          PreToolUse: [
            { matcher: 'Bash', hooks: [{ type: 'command', command: 'python3 .codex/hooks/block_rm.py', timeout: 10 }] },
            { matcher: '*', hooks: [{ type: 'command', command: 'node /x/dist/bundle/codex.mjs codex --config h.json' }] },
          ],
          PostCompact: [{ hooks: [{ type: 'command', command: './after-compact.sh' }] }],
          Stop: [{ hooks: [{ type: 'prompt', prompt: 'is the work done?' }] }],
        },
      }),
    );
    const codex = await runCli(['import-codex', join(dir, 'hooks.json'), '--json']);
    expect(codex.code, codex.stderr).toBe(0);
    const c = JSON.parse(codex.stdout);
    expect(c.hookSet.hooks).toEqual([
      expect.objectContaining({
        id: 'block-rm',
        point: 'pre_tool_use',
        match: 'Bash',
        timeoutMs: 10_000,
        command: 'python3 .codex/hooks/block_rm.py',
      }),
    ]);
    expect(c.unsupported.map((u: { event: string; why: string }) => `${u.event}: ${u.why}`)).toEqual([
      "PostCompact: event PostCompact has no hookledger point yet; keep this handler in Codex's settings",
      "Stop: prompt handlers are not supported (hookledger runs command and http hooks); keep it in Codex's settings",
    ]);

    writeFileSync(
      join(dir, 'settings.json'),
      `{ // comments are fine\n "hooks": { "BeforeTool": [{ "matcher": "run_shell_command", "sequential": true, "hooks": [{ "type": "command", "name": "guard", "command": "./guard.sh", "timeout": 1500, "env": { "MODE": "strict" } }] }],\n "BeforeToolSelection": [{ "hooks": [{ "type": "command", "command": "./select.sh" }] }] } }`,
    );
    const gemini = await runCli(['import-gemini', join(dir, 'settings.json'), '--out', join(dir, 'out.json')]);
    expect(gemini.code, gemini.stderr).toBe(0);
    expect(gemini.stdout).toContain('imported 1 hook(s)');
    expect(gemini.stdout).toContain(
      "unsupported: BeforeToolSelection command ./select.sh: event BeforeToolSelection has no hookledger point yet; keep this handler in Gemini CLI's settings",
    );
    expect(gemini.stdout).toContain('"env" dropped');
    const hookSet = JSON.parse(readFileSync(join(dir, 'out.json'), 'utf8'));
    expect(hookSet.hooks[0]).toMatchObject({ point: 'pre_tool_use', match: 'run_shell_command', timeoutMs: 1500, command: './guard.sh' });
  });
});
