import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultHookledgerBin, importClaudeHooks, installHookledger, shellWord } from '../../src/adapters/claude-settings.js';
import { loadHookSet } from '../../src/config/load.js';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

const HOOKS = join(import.meta.dirname, '../fixtures/claude-hooks');
const ROOT = join(import.meta.dirname, '../..');
/** The single-file bundle `npm run build` makes; install-claude's default launcher when present. */
const BUNDLE = join(ROOT, 'dist/bundle/claude.cjs');

/** A settings file as a Claude Code user has it: other settings, their own hooks, one of each unsupported type. */
function userSettings() {
  return {
    model: 'opus',
    permissions: { allow: ['Bash(npm test:*)'], deny: ['Read(./.env)'] },
    env: { FOO: '1' },
    hooks: {
      PreToolUse: [
        {
          matcher: 'Bash',
          hooks: [
            { type: 'command', command: `bash ${join(HOOKS, 'block-rm.sh')}`, timeout: 10 },
            { type: 'prompt', prompt: 'Is this command safe? $ARGUMENTS' },
          ],
        },
        { matcher: 'WebFetch', hooks: [{ type: 'command', command: 'python3', args: [join(HOOKS, 'deny-fetch.py')] }] },
        { matcher: 'mcp__github__.*', hooks: [{ type: 'mcp_tool', server: 'audit', tool: 'log' }] },
      ],
      PostToolUse: [{ matcher: 'Write|Edit', hooks: [{ type: 'command', command: `bash ${join(HOOKS, 'record.sh')}`, async: true }] }],
      SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'echo hello', if: 'Bash(x)' }] }],
      TaskCreated: [
        {
          hooks: [
            { type: 'agent', prompt: 'check the task' },
            { type: 'command', command: 'true' },
          ],
        },
      ],
      // An event Claude Code may add one day: not importable, and left in place.
      FutureEvent: [{ hooks: [{ type: 'command', command: 'echo future' }] }],
    },
  };
}

describe('install-claude and import-claude', () => {
  it('round trip: import the existing hooks, install hookledger, idempotently, everything else intact', async () => {
    const dir = tempDir();
    const settingsFile = join(dir, '.claude', 'settings.json');
    mkdirSync(join(dir, '.claude'));
    const original = userSettings();
    writeFileSync(settingsFile, JSON.stringify(original, null, 2));

    // 1. import-claude: the user's scripts become a hook set.
    const imported = await runCli(['import-claude', '.claude/settings.json', '--out', 'hooks.json', '--json'], { cwd: dir });
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    const report = JSON.parse(imported.stdout);
    expect(report.imported.map((h: { id: string }) => h.id)).toEqual(['block-rm', 'deny-fetch', 'record', 'hello', 'true']);
    expect(report.unsupported.map((u: { event: string; type: string }) => `${u.event}/${u.type}`)).toEqual([
      'PreToolUse/prompt',
      'PreToolUse/mcp_tool',
      'TaskCreated/agent',
      'FutureEvent/command',
    ]);
    expect(report.unsupported[3].why).toMatch(/event FutureEvent has no hookledger point/);
    expect(report.warnings).toEqual([
      expect.stringMatching(/^hello: matcher "startup" on SessionStart dropped/),
      expect.stringMatching(/^hello: "if": "Bash\(x\)" dropped/),
    ]);
    const hookSet = JSON.parse(readFileSync(join(dir, 'hooks.json'), 'utf8'));
    expect(hookSet.hooks[0]).toMatchObject({
      id: 'block-rm',
      point: 'pre_tool_use',
      match: 'Bash',
      mode: 'foreground',
      capability: 'guardrail',
      onFailure: 'deny',
      timeoutMs: 10_000,
    });
    expect(hookSet.hooks[1]).toMatchObject({
      id: 'deny-fetch',
      match: 'WebFetch',
      timeoutMs: 60_000,
      command: { command: 'python3', args: [join(HOOKS, 'deny-fetch.py')] },
    });
    expect(hookSet.hooks[2]).toMatchObject({
      id: 'record',
      point: 'post_tool_use',
      match: 'Write|Edit',
      mode: 'background',
      capability: 'observe',
    });
    expect(hookSet.hooks[4]).toMatchObject({ id: 'true', point: 'task_created', command: 'true' });
    expect((await loadHookSet(join(dir, 'hooks.json'))).hooks).toHaveLength(5);

    // 2. install-claude: one hookledger handler per event; the rest of the file kept.
    const installed = await runCli(['install-claude', '--project', '--config', 'hooks.json', '--bin', 'npx hookledger'], { cwd: dir });
    expect(installed.code).toBe(0);
    expect(installed.stdout).toMatch(/hookledger handles PreToolUse, .*PostToolUse/);
    expect(installed.stdout).toMatch(/9 other hook handler\(s\) in this file still run beside hookledger/);
    const after = JSON.parse(readFileSync(settingsFile, 'utf8'));
    expect(after.model).toBe('opus');
    expect(after.permissions).toEqual(original.permissions);
    expect(after.env).toEqual(original.env);
    const command = 'npx hookledger claude --config "$CLAUDE_PROJECT_DIR/hooks.json"';
    // The imported hooks need 10 s + 60 s in a row, well under Claude Code's 600 s default.
    expect(after.hooks.PreToolUse).toEqual([
      ...original.hooks.PreToolUse,
      { matcher: '*', hooks: [{ type: 'command', command, timeout: 600 }] },
    ]);
    expect(after.hooks.Stop).toEqual([{ matcher: '*', hooks: [{ type: 'command', command, timeout: 600 }] }]);
    expect(Object.keys(after.hooks)).toEqual(
      expect.arrayContaining(['PermissionRequest', 'UserPromptSubmit', 'SubagentStop', 'PreCompact', 'SessionEnd', 'Notification']),
    );

    // 3. A second run changes nothing, byte for byte.
    const text = readFileSync(settingsFile, 'utf8');
    const again = await runCli(['install-claude', '--project', '--config', 'hooks.json', '--bin', 'npx hookledger'], { cwd: dir });
    expect(again.stdout).toMatch(/already up to date/);
    expect(readFileSync(settingsFile, 'utf8')).toBe(text);

    // 4. Importing the installed file does not import hookledger itself.
    const reimport = await runCli(['import-claude', '.claude/settings.json', '--json'], { cwd: dir });
    expect(JSON.parse(reimport.stdout).imported).toHaveLength(5);

    // 5. --print shows without writing; --remove takes hookledger out and leaves the user's hooks.
    const printed = await runCli(['install-claude', '--config', 'hooks.json', '--events', 'PreToolUse', '--print'], { cwd: dir });
    expect(JSON.parse(printed.stdout).hooks.Stop).toBeUndefined();
    expect(readFileSync(settingsFile, 'utf8')).toBe(text);
    await runCli(['install-claude', '--remove'], { cwd: dir });
    expect(JSON.parse(readFileSync(settingsFile, 'utf8'))).toEqual(original);
  }, 120_000);

  it('--user writes absolute paths to ~/.claude/settings.json; --http registers the server', async () => {
    const home = tempDir();
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify({ name: 'x', hooks: [] }));
    const res = await runCli(
      ['install-claude', '--user', '--config', join(dir, 'hooks.json'), '--db', join(dir, 'l.db'), '--on-error', 'allow'],
      { cwd: dir, env: { HOME: home } },
    );
    expect(res.code).toBe(0);
    const user = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
    // The default launcher is the single-file bundle when `npm run build` made it, else `hookledger`.
    const bin = existsSync(BUNDLE) ? `node ${shellWord(BUNDLE)}` : 'hookledger';
    expect(res.stderr).toBe('');
    expect(user.hooks.PreToolUse[0].hooks[0].command).toBe(
      `${bin} claude --config ${join(dir, 'hooks.json')} --db ${join(dir, 'l.db')} --on-error allow`,
    );

    const { settings, skipped } = installHookledger(user, { handler: { type: 'http', url: 'http://127.0.0.1:8377/claude' } });
    expect(skipped).toEqual(['SessionStart', 'Setup']);
    expect((settings.hooks as Record<string, unknown>).SessionStart).toBeUndefined();
    expect((settings.hooks as Record<string, unknown>).PreToolUse).toEqual([
      {
        matcher: '*',
        hooks: [
          {
            type: 'http',
            url: 'http://127.0.0.1:8377/claude',
            headers: { Authorization: 'Bearer $HOOKLEDGER_TOKEN' },
            allowedEnvVars: ['HOOKLEDGER_TOKEN'],
          },
        ],
      },
    ]);
  });

  it('each handler gets a timeout sized from the hook set; SessionEnd is capped at 60 s with a warning; reinstalling updates it', async () => {
    const dir = tempDir();
    const settingsFile = join(dir, '.claude', 'settings.json');
    const writeHooks = (sessionEndMs: number) =>
      writeFileSync(
        join(dir, 'hooks.json'),
        JSON.stringify({
          name: 'sized',
          hooks: [
            // Matchers do not matter: any tool call may run both, one after the other.
            { id: 'slow-bash', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', timeoutMs: 400_000, command: 'true' },
            {
              id: 'both',
              point: ['pre_tool_use', 'user_prompt_submit'],
              match: 'Write',
              capability: 'guardrail',
              timeoutMs: 250_000,
              command: 'true',
            },
            { id: 'prompt-check', point: 'user_prompt_submit', capability: 'guardrail', timeoutMs: 45_000, command: 'true' },
            { id: 'prompt-log', point: 'user_prompt_submit', mode: 'background', timeoutMs: 900_000, command: 'true' },
            { id: 'quick-stop', point: 'stop', capability: 'guardrail', timeoutMs: 1500, command: 'true' },
            { id: 'flush', point: 'session_end', timeoutMs: sessionEndMs, command: 'true' },
          ],
        }),
      );
    const install = (...extra: string[]) =>
      runCli(['install-claude', '--config', 'hooks.json', '--bin', 'hookledger', ...extra], { cwd: dir });
    const timeouts = () => {
      const hooks = JSON.parse(readFileSync(settingsFile, 'utf8')).hooks as Record<string, { hooks: { timeout?: number }[] }[]>;
      return Object.fromEntries(Object.entries(hooks).map(([event, groups]) => [event, groups[0]!.hooks[0]!.timeout]));
    };

    writeHooks(3500);
    const first = await install();
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(timeouts()).toMatchObject({
      // 400 s + 250 s + 2 s margin: above the 600 s default, so Claude Code must be told.
      PreToolUse: 652,
      // 250 s + 45 s foreground, 2 s background drain (the background hook's own timeout is not waited for), 2 s margin.
      UserPromptSubmit: 299,
      // 1.5 s + 2 s would lower the limit below the 600 s default: the default stays.
      Stop: 600,
      PostToolUse: 600,
      // 3.5 s + 2 s rounded up: raises SessionEnd's 1.5 s budget.
      SessionEnd: 6,
    });

    // Idempotent, byte for byte.
    const text = readFileSync(settingsFile, 'utf8');
    expect((await install()).stdout).toMatch(/already up to date/);
    expect(readFileSync(settingsFile, 'utf8')).toBe(text);

    // A changed hook timeout changes the handler on the next install; past 60 s SessionEnd is capped, with one warning.
    writeHooks(70_000);
    const capped = await install('--json');
    expect(capped.code).toBe(0);
    const warning =
      /^SessionEnd: the hooks at session_end may need 72 s but Claude Code stops SessionEnd hooks after 60 s; timeout capped at 60 \(lower the hooks' timeoutMs\)$/;
    expect(capped.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^hookledger: warning: SessionEnd: /)]);
    expect(capped.stderr.trim().slice('hookledger: warning: '.length)).toMatch(warning);
    const report = JSON.parse(capped.stdout);
    expect(report).toMatchObject({ changed: true, events: ['SessionEnd'], warnings: [expect.stringMatching(warning)] });
    expect(timeouts()).toMatchObject({ PreToolUse: 652, SessionEnd: 60 });

    // http handlers (replacing the command ones): serve runs background hooks after the response, so no drain.
    const http = await runCli(
      ['install-claude', '--http', 'http://127.0.0.1:8377', '--config', 'hooks.json', '--events', 'UserPromptSubmit,SessionEnd', '--print'],
      { cwd: dir },
    );
    const httpHooks = JSON.parse(http.stdout).hooks;
    expect(httpHooks.UserPromptSubmit).toHaveLength(1);
    expect(httpHooks.UserPromptSubmit[0].hooks[0]).toMatchObject({ type: 'http', timeout: 297 });
    expect(httpHooks.SessionEnd[0].hooks[0]).toMatchObject({ type: 'http', timeout: 60 });
    // Without the hook set serve runs, only the defaults can be written, and the user is told.
    const blind = await runCli(['install-claude', '--http', 'http://127.0.0.1:8377', '--events', 'SessionEnd', '--print'], { cwd: dir });
    expect(JSON.parse(blind.stdout).hooks.SessionEnd[0].hooks[0]).toMatchObject({ type: 'http', timeout: 2 });
    expect(blind.stderr).toMatch(/^hookledger: warning: --http without --config: handler timeouts are Claude Code's defaults .*\n$/);
  }, 60_000);

  it('--project: a package installed in the project is launched from $CLAUDE_PROJECT_DIR', async () => {
    // This checkout is a project with hookledger inside it: the committed file must not name /work/... .
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify({ name: 'x', hooks: [] }));
    const res = await runCli(['install-claude', '--config', join(dir, 'hooks.json'), '--events', 'PreToolUse', '--print'], { cwd: ROOT });
    expect(res.stderr).toBe('');
    const bin = existsSync(BUNDLE) ? 'node "$CLAUDE_PROJECT_DIR/dist/bundle/claude.cjs"' : 'hookledger';
    expect(JSON.parse(res.stdout).hooks.PreToolUse[0].hooks[0].command).toBe(`${bin} claude --config ${join(dir, 'hooks.json')}`);
  });

  it('defaultHookledgerBin: relative inside the project (via node_modules/hookledger), absolute and flagged outside', () => {
    const project = tempDir();
    // pnpm layout: the package lives in the store, node_modules/hookledger links to it.
    const stored = join(project, 'node_modules', '.pnpm', 'hookledger@1.0.0', 'node_modules', 'hookledger');
    mkdirSync(join(stored, 'dist', 'bundle'), { recursive: true });
    writeFileSync(join(stored, 'dist', 'bundle', 'claude.cjs'), '');
    symlinkSync(stored, join(project, 'node_modules', 'hookledger'));
    const inProject = { bin: 'node "$CLAUDE_PROJECT_DIR/node_modules/hookledger/dist/bundle/claude.cjs"', machineSpecific: false };
    expect(defaultHookledgerBin(stored, project)).toEqual(inProject);
    expect(defaultHookledgerBin(join(project, 'node_modules', 'hookledger'), project)).toEqual(inProject);

    const global = tempDir();
    mkdirSync(join(global, 'dist', 'bundle'), { recursive: true });
    writeFileSync(join(global, 'dist', 'bundle', 'claude.cjs'), '');
    expect(defaultHookledgerBin(global, project)).toEqual({
      bin: `node ${shellWord(join(global, 'dist/bundle/claude.cjs'))}`,
      machineSpecific: true,
    });
    expect(defaultHookledgerBin(global)).toEqual({
      bin: `node ${shellWord(join(global, 'dist/bundle/claude.cjs'))}`,
      machineSpecific: false,
    });
    expect(defaultHookledgerBin(tempDir(), project)).toEqual({ bin: 'hookledger', machineSpecific: false });
  });

  it.runIf(existsSync(BUNDLE))(
    '--project with a package outside the project warns once, on stderr and in --json, and stays idempotent',
    async () => {
      const dir = tempDir();
      writeFileSync(join(dir, 'hooks.json'), JSON.stringify({ name: 'x', hooks: [] }));
      const settingsFile = join(dir, '.claude', 'settings.json');
      const first = await runCli(['install-claude', '--config', 'hooks.json'], { cwd: dir });
      expect(first.code).toBe(0);
      expect(first.stderr).toMatch(
        /^hookledger: warning: .*settings\.json now holds a machine-specific path \(node \/.*claude\.cjs\) .*npm install -D hookledger.*--local or --bin\n$/,
      );
      const text = readFileSync(settingsFile, 'utf8');
      expect(JSON.parse(text).hooks.Stop[0].hooks[0].command).toBe(
        `node ${shellWord(BUNDLE)} claude --config "$CLAUDE_PROJECT_DIR/hooks.json"`,
      );

      const again = await runCli(['install-claude', '--config', 'hooks.json', '--json'], { cwd: dir });
      const report = JSON.parse(again.stdout);
      expect(report).toMatchObject({ changed: false, warnings: [expect.stringContaining('machine-specific path')] });
      expect(readFileSync(settingsFile, 'utf8')).toBe(text);

      // --local is never committed, and an explicit --bin is the user's choice: no warning.
      const local = await runCli(['install-claude', '--local', '--config', 'hooks.json', '--json'], { cwd: dir });
      expect(local.stderr).toBe('');
      expect(JSON.parse(local.stdout).warnings).toEqual([]);
      const explicit = await runCli(['install-claude', '--config', 'hooks.json', '--bin', 'npx hookledger'], { cwd: dir });
      expect(explicit.stderr).toBe('');
    },
    60_000,
  );

  it('--events accepts only the events hookledger installs for', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hooks.json'), JSON.stringify({ name: 'x', hooks: [] }));
    const typo = await runCli(['install-claude', '--config', 'hooks.json', '--events', 'PreTooluse,Stop'], { cwd: dir });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toMatch(
      /^hookledger: --events: "PreTooluse" is not an event hookledger installs for \(did you mean PreToolUse\?\); valid: SessionStart, .*PreToolUse, .*StopFailure, .*WorktreeCreate, .*ElicitationResult\n$/,
    );
    expect(existsSync(join(dir, '.claude'))).toBe(false);
    // WorktreeCreate is opt-in, and a hook set that cannot answer the path is warned about.
    const worktree = await runCli(
      ['install-claude', '--config', 'hooks.json', '--events', 'Stop,WorktreeCreate', '--print', '--bin', 'hookledger'],
      { cwd: dir },
    );
    expect(worktree.code).toBe(0);
    expect(worktree.stderr).toMatch(/^hookledger: warning: WorktreeCreate: the hook set has no hook at worktree_create/);
    expect(Object.keys(JSON.parse(worktree.stdout).hooks)).toEqual(['Stop', 'WorktreeCreate']);
    const defaults = await runCli(['install-claude', '--config', 'hooks.json', '--print', '--bin', 'hookledger'], { cwd: dir });
    const installed = Object.keys(JSON.parse(defaults.stdout).hooks);
    expect(installed).toHaveLength(29);
    expect(installed).not.toContain('WorktreeCreate');
    expect(installed).not.toContain('MessageDisplay');
    const ok = await runCli(['install-claude', '--config', 'hooks.json', '--events', 'PreToolUse, Stop', '--bin', 'hookledger'], {
      cwd: dir,
    });
    expect(ok.code).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(join(dir, '.claude', 'settings.json'), 'utf8')).hooks)).toEqual(['PreToolUse', 'Stop']);
  }, 60_000);

  it('errors are one clear line', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'broken.json'), '{"hooks": ');
    const bad = await runCli(['import-claude', 'broken.json'], { cwd: dir });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^hookledger: .*broken\.json: not valid JSON .*\n$/);
    const missing = await runCli(['install-claude'], { cwd: dir });
    expect(missing.stderr).toMatch(/--config PATH is required/);
    expect(() =>
      importClaudeHooks({ hooks: { PreToolUse: [{ hooks: [{ type: 'command', command: 'x', timeout: 'ten' }] }] } }, { source: 's' }),
    ).toThrow(/timeout must be a number of seconds/);
    const invalidRegex = importClaudeHooks(
      { hooks: { PreToolUse: [{ matcher: 'Bash(', hooks: [{ type: 'command', command: 'x' }] }] } },
      { source: 's' },
    );
    expect(invalidRegex.unsupported[0]!.why).toMatch(/not a valid regular expression/);
  });
});
