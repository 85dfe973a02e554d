import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { defineHooks } from '../../src/domain/hooks.js';
import { ask, deny } from '../../src/domain/results.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import type { RecordingLedger } from '../../src/runner/recorder.js';
import { createRunner } from '../../src/runner/runner.js';

/** Machines for the central-ledger tests (sources.test.ts, least-privilege.test.ts). */

const root = join(import.meta.dirname, '../..');
const bin = join(root, 'bin/hookledger.js');

/** The built CLI (dist/, as installed), a real child process. */
export function hookledger(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  input = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [bin, ...args],
      { env: { ...process.env, NO_COLOR: '1', ...env }, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin!.end(input);
  });
}

const hookSet = defineHooks({
  name: 'sources',
  version: '1',
  hooks: [
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      run: (inv) =>
        String((inv.toolInput as { command?: string }).command).startsWith('rm') ? deny('no rm', 'safety_violation') : undefined,
    },
    {
      id: 'ask-push',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      run: (inv) => (String((inv.toolInput as { command?: string }).command).includes('push') ? ask('push?') : undefined),
    },
    { id: 'watch', point: ['pre_tool_use', 'post_tool_use'], run: () => undefined },
    // Completed after its invocation committed: shipped as a background link of its own.
    { id: 'bg', point: 'pre_tool_use', mode: 'background', run: () => new Promise<void>((resolve) => setTimeout(resolve, 1)) },
  ],
});

/** A hostile host name: terminal escapes and a line break. */
export const HOSTILE_HOST = 'evil\u001b[2J\u001b]0;pwned\u0007\nhost';

/**
 * Records `count` invocations into a SQLite ledger, each on one of `hosts` in turn, in sessions
 * shared with the other machine's (`s-0`, `s-1`, ...).
 */
export async function writeMachine(path: string, hosts: string[], count: number, tag: string): Promise<void> {
  const ledger = SqliteLedger.open({ path });
  const runners = hosts.map((host) => {
    const onHost: RecordingLedger = { writer: (options) => ledger.writer({ ...options, host }) };
    return createRunner({ hookSet, ledger: onHost });
  });
  for (let i = 0; i < count; i++) {
    const command = i % 3 === 1 ? `rm -rf ${tag}-${i}` : i % 7 === 0 ? `git push ${tag}` : `echo ${tag}-${i}`;
    await runners[i % hosts.length]!.run({
      point: i % 5 === 4 ? 'post_tool_use' : 'pre_tool_use',
      sessionId: `s-${i % 3}`,
      agent: 'claude-code',
      toolName: 'Bash',
      toolUseId: `toolu_${tag}_${i}`,
      toolInput: { command },
      ...(i % 5 === 4 ? { toolResponse: { ok: true } } : {}),
    });
  }
  for (const runner of runners) await runner.close();
  ledger.close();
}
