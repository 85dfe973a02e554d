import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { startCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

/** A script that, if it ever runs, leaves a marker file next to itself (and allows). */
function plant(dir: string, relative: string): string {
  const path = join(dir, relative);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\ntouch "${path}.ran"\nexit 0\n`);
  chmodSync(path, 0o755);
  return `${path}.ran`;
}

/** Starts `serve` with the given extra flags, sends one Claude payload naming `cwd`, returns the answer. */
async function serveOnce(config: string, db: string, cwd: string, extra: string[]): Promise<{ answer: unknown; stderr: string }> {
  const { child, output, exited } = startCli([
    'serve',
    '--config',
    config,
    '--db',
    db,
    '--port',
    '0',
    '--json',
    '--token',
    'central-test-token-0123456789',
    ...extra,
  ]);
  try {
    const started = await new Promise<{ url: string }>((resolve, reject) => {
      const poll = setInterval(() => {
        if (output.stdout.includes('\n')) {
          clearInterval(poll);
          resolve(JSON.parse(output.stdout.split('\n')[0]!));
        }
      }, 20);
      void exited.then(() => {
        clearInterval(poll);
        reject(new Error(`serve exited: ${output.stderr}`));
      });
    });
    const payload = {
      session_id: 'central-1',
      transcript_path: '/tmp/t.jsonl',
      cwd,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_central',
    };
    const res = await fetch(`${started.url}/claude`, {
      method: 'POST',
      headers: { authorization: 'Bearer central-test-token-0123456789' },
      body: JSON.stringify(payload),
    });
    return { answer: await res.json(), stderr: output.stderr };
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

describe('serve --central: a payload cwd is data, never where hooks are looked up or run', () => {
  const hooks = (dir: string) => {
    const config = join(dir, 'hooks.json');
    writeFileSync(
      config,
      JSON.stringify({
        name: 'central',
        version: '1',
        hooks: [
          // Both forms a hook set imported from Claude settings uses: relative, and under $CLAUDE_PROJECT_DIR.
          { id: 'relative', point: 'pre_tool_use', capability: 'guardrail', onFailure: 'allow', command: './check.sh' },
          {
            id: 'project-dir',
            point: 'pre_tool_use',
            capability: 'guardrail',
            onFailure: 'allow',
            command: '"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh',
          },
        ],
      }),
    );
    return config;
  };

  it('runs no script from a directory the payload names; records the cwd', async () => {
    const server = tempDir();
    const victim = tempDir();
    const planted = [plant(victim, 'check.sh'), plant(victim, '.claude/hooks/check.sh')];
    const db = join(server, 'ledger.db');
    const { answer } = await serveOnce(hooks(server), db, victim, ['--central']);
    expect(answer).toBeTypeOf('object');
    expect(planted.filter((marker) => existsSync(marker))).toEqual([]);
    const ledger = new Database(db, { readonly: true });
    try {
      expect(ledger.prepare('SELECT cwd FROM invocations').all()).toEqual([{ cwd: victim }]);
      // The hooks were looked up in the server's workspace (the hook set's directory), where they do not exist.
      const outcomes = ledger.prepare('SELECT hook_id, status, failure_reason FROM outcomes ORDER BY hook_id').all();
      expect(outcomes).toEqual([
        { hook_id: 'project-dir', status: 'failed', failure_reason: 'execution_failed' },
        { hook_id: 'relative', status: 'failed', failure_reason: 'execution_failed' },
      ]);
    } finally {
      ledger.close();
    }
  });

  it('runs hooks from --workspace when given (else the hook set directory, as above)', async () => {
    const server = tempDir();
    const workspace = tempDir();
    const victim = tempDir();
    const victimMarkers = [plant(victim, 'check.sh'), plant(victim, '.claude/hooks/check.sh')];
    const ownMarkers = [plant(workspace, 'check.sh'), plant(workspace, '.claude/hooks/check.sh')];
    await serveOnce(hooks(server), join(server, 'ledger.db'), victim, ['--central', '--workspace', workspace]);
    expect(ownMarkers.filter((marker) => existsSync(marker))).toEqual(ownMarkers);
    expect(victimMarkers.filter((marker) => existsSync(marker))).toEqual([]);
  });

  it('control: without --central (a server on the agent machine) the same payload does run them, as Claude Code would', async () => {
    const server = tempDir();
    const victim = tempDir();
    const planted = [plant(victim, 'check.sh'), plant(victim, '.claude/hooks/check.sh')];
    await serveOnce(hooks(server), join(server, 'ledger.db'), victim, []);
    expect(planted.filter((marker) => existsSync(marker))).toEqual(planted);
  });

  it('--workspace without central mode is a usage error, in one line', async () => {
    const server = tempDir();
    const { child, output, exited } = startCli(['serve', '--config', hooks(server), '--db', join(server, 'l.db'), '--workspace', server]);
    child.stdin!.end();
    expect((await exited).code).toBe(2);
    expect(output.stderr.trim().split('\n')).toHaveLength(1);
    expect(output.stderr).toContain('--workspace applies only to a central server');
  });
});
