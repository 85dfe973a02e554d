import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { WIRE_HOOKS } from './agent-wire.js';
import { codexProblems } from './codex-protocol.js';

/**
 * When the ledger cannot be opened, hookledger cannot record, so it must not let a guarded tool run:
 * each agent gets its own protocol's deny (or, with --on-error allow, proceeds), with one line saying why.
 */
const codexPre = { session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'shell', tool_input: { command: 'ls' }, cwd: '/w' };
const geminiBefore = { session_id: 's', hook_event_name: 'BeforeTool', tool_name: 'run_shell_command', tool_input: { command: 'ls' } };

/** Ledgers that cannot be used: a missing directory, a file that is not SQLite, a directory in the file's place. */
function badLedgers(dir: string): [string, string, RegExp][] {
  const garbage = join(dir, 'garbage.db');
  writeFileSync(garbage, 'this is not a database, it is a text file that is long enough to have a header\n'.repeat(20));
  return [
    ['a missing directory', join(dir, 'missing', 'l.db'), /cannot open ledger .*does not exist/],
    ['a file that is not SQLite', garbage, /not a (SQLite|hookledger) (database|ledger)|file is not a database/i],
    ['a directory', dir, /cannot open ledger|is a directory/i],
  ];
}

describe('codex and gemini when the ledger cannot be opened', { timeout: 300_000 }, () => {
  it('codex PreToolUse: exit 2, nothing on stdout, one stderr line naming the ledger problem', async () => {
    const dir = tempDir();
    for (const [label, db, reason] of badLedgers(dir)) {
      const r = await runCli(['codex', '--config', WIRE_HOOKS, '--db', db], { input: JSON.stringify(codexPre), timeoutMs: 60_000 });
      expect.soft(r.code, `${label}: ${r.stderr}`).toBe(2);
      expect.soft(r.stdout, label).toBe('');
      expect.soft(codexProblems('PreToolUse', r.stdout, r.code), label).toEqual([]);
      expect.soft(r.stderr, label).toMatch(/^hookledger could not decide: /);
      expect.soft(r.stderr, label).toMatch(reason);
      expect.soft(r.stderr.trim().split('\n'), label).toHaveLength(1);
      expect.soft(r.stderr, label).not.toMatch(/\bat .*\.(ts|js):\d+/);
    }
    // Nothing already there is touched: the file that is not a ledger keeps its bytes.
    expect(readFileSync(join(dir, 'garbage.db'), 'utf8')).toMatch(/^this is not a database/);
  });

  it('gemini BeforeTool: decision deny with the reason, exit 2, one stderr line', async () => {
    const dir = tempDir();
    for (const [label, db, reason] of badLedgers(dir)) {
      const r = await runCli(['gemini', '--config', WIRE_HOOKS, '--db', db], { input: JSON.stringify(geminiBefore), timeoutMs: 60_000 });
      expect.soft(r.code, `${label}: ${r.stderr}`).toBe(2);
      const answer = JSON.parse(r.stdout) as { decision?: string; reason?: string };
      expect.soft(answer.decision, label).toBe('deny');
      expect.soft(answer.reason, label).toMatch(/^hookledger could not decide: /);
      expect.soft(answer.reason, label).toMatch(reason);
      expect.soft(r.stderr.trim().split('\n'), label).toHaveLength(1);
      expect.soft(r.stderr, label).not.toMatch(/\bat .*\.(ts|js):\d+/);
    }
  });

  it('--on-error allow: both proceed and say that they could not record', async () => {
    const db = join(tempDir(), 'missing', 'l.db');
    const codex = await runCli(['codex', '--config', WIRE_HOOKS, '--db', db, '--on-error', 'allow'], { input: JSON.stringify(codexPre) });
    expect(codex.code).toBe(0);
    expect(codex.stdout).toBe('');
    expect(codex.stderr).toMatch(/cannot open ledger .*HOOKLEDGER_ON_ERROR=allow: proceeding/s);
    const gemini = await runCli(['gemini', '--config', WIRE_HOOKS, '--db', db, '--on-error', 'allow'], {
      input: JSON.stringify(geminiBefore),
    });
    expect(gemini.code).toBe(0);
    expect(JSON.parse(gemini.stdout)).toEqual({ systemMessage: expect.stringMatching(/cannot open ledger .*proceeding/) });
  });
});
