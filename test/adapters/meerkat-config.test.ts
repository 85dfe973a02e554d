import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { loadHookSet } from '../../src/config/load.js';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

const USER_TOML = `# my meerkat settings
[agent]
model = "claude-opus" # inline comment kept

[hooks]
default_timeout_ms = 7000
payload_max_bytes = 131072

[[hooks.entries]]
id = "audit-log"
point = "post_tool_execution"
mode = "background"
capability = "observe"
[hooks.entries.runtime]
type = "command"
command = "python3"
args = ["/opt/hooks/audit.py"]
env = { AUDIT_DIR = "/var/log/agent" }

[[hooks.entries]]
id = "builtin-redactor"
point = "pre_llm_request"
[hooks.entries.runtime]
type = "in_process"
handler = "redact_pii"
`;

const PROJECT_TOML = `[[hooks.entries]]
id = "no-rm"
point = "pre_tool_execution"
capability = "guardrail"
priority = 5
timeout_ms = 1500
[hooks.entries.runtime]
type = "command"
command = "/repo/hooks/no_rm.sh"

# a remote policy, switched off for now
[[hooks.entries]]
id = "policy"
enabled = false
point = "pre_tool_execution"
capability = "guardrail"
[hooks.entries.runtime]
type = "http"
url = "https://policy.example/check"
headers = { Authorization = "Bearer abc" }

[tools]
shell = true
`;

describe('import-meerkat', () => {
  it('imports a layered pair (user, then project) with ids, points, priorities, modes, capabilities, timeouts and enabled flags', async () => {
    const home = tempDir();
    const project = tempDir();
    mkdirSync(join(home, '.rkat'));
    mkdirSync(join(project, '.rkat'));
    writeFileSync(join(home, '.rkat', 'config.toml'), USER_TOML);
    writeFileSync(join(project, '.rkat', 'config.toml'), PROJECT_TOML);
    const result = await runCli(['import-meerkat', '--out', 'hooks.json', '--json'], { cwd: project, env: { HOME: home } });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout);
    expect(report.imported.map((h: { id: string }) => h.id)).toEqual(['audit-log', 'no-rm', 'policy']);
    expect(report.unsupported).toEqual([
      expect.objectContaining({ id: 'builtin-redactor', type: 'in_process', why: expect.stringMatching(/cannot be imported/) }),
    ]);
    const hooks = JSON.parse(readFileSync(join(project, 'hooks.json'), 'utf8')).hooks;
    expect(hooks[0]).toMatchObject({
      id: 'audit-log',
      point: 'post_tool_execution',
      mode: 'background',
      capability: 'observe',
      priority: 100,
      timeoutMs: 7000, // [hooks] default_timeout_ms
      command: { command: 'python3', args: ['/opt/hooks/audit.py'], env: { AUDIT_DIR: '/var/log/agent' }, protocol: 'meerkat' },
    });
    expect(hooks[1]).toMatchObject({
      id: 'no-rm',
      point: 'pre_tool_execution',
      capability: 'guardrail',
      priority: 5,
      timeoutMs: 1500,
      command: { command: '/repo/hooks/no_rm.sh', args: [], protocol: 'meerkat' },
    });
    expect(hooks[2]).toMatchObject({
      id: 'policy',
      enabled: false,
      http: { url: 'https://policy.example/check', headers: { Authorization: 'Bearer abc' }, protocol: 'meerkat' },
    });
    const set = await loadHookSet(join(project, 'hooks.json'));
    expect(set.hooks.map((h) => [h.id, h.points, h.enabled])).toEqual([
      ['audit-log', ['post_tool_use'], true],
      ['no-rm', ['pre_tool_use'], true],
      ['policy', ['pre_tool_use'], false],
    ]);
  }, 60_000);

  it('bad TOML is one line naming the file', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.toml'), '[hooks\nid = 1');
    const result = await runCli(['import-meerkat', join(dir, 'bad.toml')]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^hookledger: ${join(dir, 'bad.toml')}: not valid TOML \\(.*\\)\\n$`));
  }, 30_000);
});

describe('install-meerkat', () => {
  it('writes one entry per point, keeps every other line, comment and table, and is idempotent byte for byte', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, '.rkat'));
    const file = join(dir, '.rkat', 'config.toml');
    writeFileSync(file, USER_TOML + '\n' + PROJECT_TOML);
    writeFileSync(
      join(dir, 'hooks.json'),
      JSON.stringify({
        name: 'x',
        hooks: [{ id: 'g', point: 'pre_tool_execution', capability: 'guardrail', timeoutMs: 9000, command: 'true' }],
      }),
    );
    const install = (extra: string[] = []) =>
      runCli(['install-meerkat', '--config', 'hooks.json', '--db', 'l.db', '--bin', 'hookledger', ...extra], { cwd: dir });
    const first = await install(['--points', 'pre_tool_execution,run_started']);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(/hookledger handles pre_tool_execution, run_started/);
    expect(first.stdout).toMatch(/4 other meerkat hook entries still run beside hookledger/);
    const text = readFileSync(file, 'utf8');
    // Everything that was there is still there, byte for byte, in front of the new entries.
    expect(text.startsWith(USER_TOML + '\n' + PROJECT_TOML)).toBe(true);
    const config = parse(text) as {
      hooks: { entries: { id: string; timeout_ms?: number; runtime: { command?: string; args?: string[] } }[] };
      tools: unknown;
    };
    const ours = config.hooks.entries.filter((e) => e.id.startsWith('hookledger-'));
    expect(ours.map((e) => e.id)).toEqual(['hookledger-pre_tool_execution', 'hookledger-run_started']);
    expect(ours[0]).toMatchObject({
      point: 'pre_tool_execution',
      mode: 'foreground',
      capability: 'guardrail',
      timeout_ms: 11_000, // 9 s of foreground hooks + 2 s
      runtime: {
        type: 'command',
        command: 'hookledger',
        args: ['meerkat', '--config', join(dir, 'hooks.json'), '--db', join(dir, 'l.db')],
      },
    });
    expect(ours[1]!.timeout_ms).toBe(5000);
    expect(config.tools).toEqual({ shell: true });

    const again = await install(['--points', 'pre_tool_execution,run_started']);
    expect(again.stdout).toMatch(/already up to date/);
    expect(readFileSync(file, 'utf8')).toBe(text);

    // Another point set replaces hookledger's entries; --remove restores the file exactly.
    await install();
    const all = parse(readFileSync(file, 'utf8')) as { hooks: { entries: { id: string }[] } };
    expect(all.hooks.entries.filter((e) => e.id.startsWith('hookledger-'))).toHaveLength(8);
    const third = readFileSync(file, 'utf8');
    await install();
    expect(readFileSync(file, 'utf8')).toBe(third);
    const removed = await runCli(['install-meerkat', '--remove'], { cwd: dir });
    expect(removed.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(USER_TOML + '\n' + PROJECT_TOML);
    // A re-import of the installed file skips hookledger's own entries.
    await install();
    const reimport = await runCli(['import-meerkat', file, '--json'], { cwd: dir });
    expect(JSON.parse(reimport.stdout).imported.map((h: { id: string }) => h.id)).toEqual(['audit-log', 'no-rm', 'policy']);
  }, 120_000);

  it('--http writes the server entry with the literal bearer token; a bad point is one line', async () => {
    const dir = tempDir();
    const file = join(dir, 'config.toml');
    const http = await runCli([
      'install-meerkat',
      '--file',
      file,
      '--http',
      'http://127.0.0.1:8377',
      '--token',
      'tok-0123456789abcdef',
      '--points',
      'pre_tool_execution',
    ]);
    expect(http.code).toBe(0);
    expect(parse(readFileSync(file, 'utf8'))).toEqual({
      hooks: {
        entries: [
          {
            id: 'hookledger-pre_tool_execution',
            point: 'pre_tool_execution',
            mode: 'foreground',
            capability: 'guardrail',
            priority: 10,
            timeout_ms: 5000,
            runtime: { type: 'http', url: 'http://127.0.0.1:8377/meerkat', headers: { Authorization: 'Bearer tok-0123456789abcdef' } },
          },
        ],
      },
    });
    const bad = await runCli(['install-meerkat', '--file', file, '--http', 'http://x', '--token', 't', '--points', 'pre_tool_use']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^hookledger: --points: "pre_tool_use" is not a meerkat point; valid: run_started, .*\n$/);
  }, 60_000);
});
