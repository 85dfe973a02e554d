import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { setup, tempDir } from '../helpers.js';

const script = join(import.meta.dirname, '../fixtures/scripts/hang-mid-invocation.ts');

describe('the write path', () => {
  it('writes the invocation as running before any hook runs', async () => {
    let statusSeenByHook: unknown;
    const { runner, ledger } = setup([
      {
        id: 'peek',
        point: 'pre_tool_use',
        run: () => {
          statusSeenByHook = ledger.sqlite.prepare(`SELECT status, decision FROM invocations ORDER BY id DESC LIMIT 1`).get();
        },
      },
    ]);
    const report = await runner.run({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'ls' } });
    expect(statusSeenByHook).toEqual({ status: 'running', decision: null });
    expect(explain(ledger, report.invocationId).invocation).toMatchObject({ status: 'completed', decision: 'none' });
  });

  it('stores the hook set once per fingerprint', async () => {
    const { runner, ledger } = setup([{ id: 'a', point: 'stop', run: () => undefined }]);
    await runner.run({ point: 'stop' });
    await runner.run({ point: 'stop' });
    const rows = ledger.sqlite.prepare('SELECT fingerprint, definition_json FROM hook_sets').all() as {
      fingerprint: string;
      definition_json: string;
    }[];
    expect(rows).toHaveLength(1);
    expect(rows[0]!.fingerprint).toBe(runner.hookSet.fingerprint);
    expect(rows[0]!.definition_json).toContain('"source"');
  });
});

describe('recovery', () => {
  it('a process killed mid-invocation leaves rows that the next open marks interrupted', async () => {
    const path = join(tempDir(), 'crash.db');
    const child = spawn(process.execPath, ['--import', 'tsx', script, path], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('hook-started') && out.includes('bg-started')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`child exited early (${code}): ${out}`)));
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));

    const ledger = SqliteLedger.open({ path });
    try {
      expect(ledger.recovered).toEqual({ invocations: 1, outcomes: 1 });
      const rows = ledger.sqlite.prepare('SELECT id, point, status, message FROM invocations ORDER BY id').all() as {
        id: number;
        status: string;
        message: string;
      }[];
      expect(rows.map((r) => r.status)).toEqual(['completed', 'interrupted']);
      expect(rows[1]!.message).toMatch(/ended before the decision was committed/);
      expect(explain(ledger, rows[0]!.id).outcomes.find((o) => o.hookId === 'bg')?.status).toBe('interrupted');
      expect(ledger.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      ledger.close();
    }
    // A second open finds nothing more to recover.
    const again = SqliteLedger.open({ path });
    expect(again.recovered).toEqual({ invocations: 0, outcomes: 0 });
    again.close();
  });
});
