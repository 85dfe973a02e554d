import { spawnSync } from 'node:child_process';
import { existsSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildHookBundle } from '../../scripts/build-bundle.js';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

describe('the single-file meerkat bundle', () => {
  it('answers like `hookledger meerkat`, writes its code cache, and answers an unknown flag with exit 0', async () => {
    const dir = tempDir();
    const launcher = await buildHookBundle('meerkat', join(dir, 'dist', 'bundle', 'meerkat.cjs'));
    for (const name of ['migrations', 'node_modules']) symlinkSync(join(import.meta.dirname, '../..', name), join(dir, name));
    const hooks = join(dir, 'hooks.json');
    writeFileSync(
      hooks,
      JSON.stringify({
        name: 'b',
        hooks: [{ id: 'block', point: 'pre_tool_execution', capability: 'guardrail', command: `echo "no rm" >&2; exit 2` }],
      }),
    );
    const input = JSON.stringify({
      point: 'pre_tool_execution',
      session_id: 's',
      tool_call: { tool_use_id: 'c', name: 'shell', args: { command: 'rm -rf /' } },
    });
    const run = (args: string[]) => spawnSync(process.execPath, [launcher, ...args], { input, encoding: 'utf8' });

    const first = run(['--config', hooks, '--db', join(dir, 'b.db')]);
    expect(first).toMatchObject({ status: 0, stderr: '' });
    expect(existsSync(`${launcher.replace(/\.cjs$/, '-bundle.cjs')}.cache`)).toBe(true);
    const second = run(['meerkat', '--config', hooks, '--db', join(dir, 'b.db')]);
    expect(second.status).toBe(0);
    const cli = await runCli(['meerkat', '--config', hooks, '--db', join(dir, 'c.db')], { input });
    const strip = (text: string) => text.replace(/explain \d+/, 'explain N');
    expect(strip(second.stdout)).toBe(strip(cli.stdout));
    expect(JSON.parse(second.stdout).decision).toMatchObject({ decision: 'deny', message: expect.stringContaining('denied by block') });

    const bogus = run(['--config', hooks, '--bogus']);
    expect(bogus.status).toBe(0);
    expect(JSON.parse(bogus.stdout).decision).toMatchObject({
      decision: 'deny',
      reason_code: 'runtime_error',
      message: expect.stringMatching(/Unknown option '--bogus'/),
    });
  }, 60_000);
});
