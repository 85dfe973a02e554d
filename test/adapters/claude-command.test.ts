import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { explain } from '../../src/ledger/queries/explain.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { runCli, startCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { writeScriptsConfig as writeConfig } from './claude-scripts.js';
import { protocolProblems } from './protocol.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/claude-code');

/** What each shared fixture must get back. */
const EXPECTED: Record<string, { decision: string; json: unknown; hook?: string }> = {
  '01-pretooluse-bash-rm.json': {
    decision: 'deny',
    hook: 'block-rm',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(
          /^\[hookledger\] denied by block-rm \(policy_violation\): block-rm: recursive delete refused \(hookledger explain \d+\)$/,
        ),
      },
    },
  },
  '02-pretooluse-write-dotenv.json': { decision: 'none', json: {} },
  '03-pretooluse-edit-ts.json': { decision: 'none', json: {} },
  '04-pretooluse-read-ssh-key.json': {
    decision: 'deny',
    hook: 'crash',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringMatching(
          /denied by crash \(runtime_error\): hook "crash" failed \(execution_failed: exited with code 1: crash.sh: something broke\) and fails closed/,
        ),
      },
    },
  },
  '05-pretooluse-webfetch.json': {
    decision: 'deny',
    hook: 'deny-fetch',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringContaining(
          'denied by deny-fetch (policy_violation): paste sites are off limits: https://pastebin.com/raw/9xQk2LmZ',
        ),
      },
    },
  },
  '06-pretooluse-mcp-github-create-issue.json': {
    decision: 'deny',
    hook: 'hang',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: expect.stringContaining('denied by hang (timeout): hook "hang" timed out after 300 ms and fails closed'),
      },
    },
  },
  '07-pretooluse-bash-in-subagent.json': { decision: 'none', json: {} },
  '08-permissionrequest-bash.json': { decision: 'none', json: {} },
  '09-posttooluse-bash.json': {
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'seen PostToolUse for Bash' } },
  },
  '10-posttooluse-write.json': {
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'seen PostToolUse for Write' } },
  },
  '11-posttooluse-edit.json': {
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'seen PostToolUse for Edit' } },
  },
  '12-posttooluse-mcp-memory.json': {
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'seen PostToolUse for mcp__memory__create_entities' } },
  },
};

describe('hookledger claude (command mode, real scripts, real child processes)', () => {
  it('answers every shared fixture in its event format, concurrently, and records each with its raw payload', async () => {
    const dir = tempDir();
    const config = writeConfig(dir);
    const db = join(dir, 'ledger.db');
    const recordFile = join(dir, 'record.txt');
    const names = readdirSync(FIXTURES)
      .filter((f) => f.endsWith('.json'))
      .sort();
    expect(names).toHaveLength(Object.keys(EXPECTED).length);
    // As Claude Code does: one process per event, many at once, one ledger file.
    const results = await Promise.all(
      names.map((name) =>
        runCli(['claude', '--config', config, '--db', db], {
          input: readFileSync(join(FIXTURES, name), 'utf8'),
          env: { RECORD_FILE: recordFile, RECORD_DELAY: '0.2' },
          cwd: dir,
          timeoutMs: 100_000,
        }),
      ),
    );
    const ledger = SqliteLedger.open({ path: db });
    try {
      names.forEach((name, i) => {
        const result = results[i]!;
        const payload = JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Record<string, unknown>;
        const expected = EXPECTED[name]!;
        expect({ name, code: result.code, stderr: result.stderr }).toEqual({ name, code: 0, stderr: '' });
        // Exactly one JSON object on stdout.
        expect(result.stdout.trim().split('\n')).toHaveLength(1);
        const answer = JSON.parse(result.stdout) as Record<string, unknown>;
        expect(answer, name).toEqual(expected.json);
        expect(protocolProblems(payload.hook_event_name as string, answer), name).toEqual([]);

        // 03 and 11 share a tool_use_id (the pre and post of one Edit): look up by event too.
        const id = ledger.sqlite
          .prepare("SELECT id FROM invocations WHERE event_name = ? AND coalesce(tool_use_id, '') = ?")
          .pluck()
          .get(payload.hook_event_name, payload.tool_use_id ?? '') as number;
        const matching = explain(ledger, id);
        {
          // Verbatim, except where the ledger's redaction replaced a secret (and says so).
          if (matching.redactions.length === 0) expect(matching.raw, name).toEqual(payload);
          else expect(Object.keys(matching.raw as object).sort(), name).toEqual(Object.keys(payload).sort());
          expect(matching.invocation.decision).toBe(expected.decision);
          expect(matching.decisive?.hookId ?? null).toBe(expected.hook ?? null);
          const named = /hookledger explain (\d+)/.exec(result.stdout)?.[1];
          if (named) expect(Number(named)).toBe(matching.invocation.id);
        }
      });
      // The Write call: the garbage hook's failure is on record although it let the call through.
      const write = explain(ledger, 'toolu_01Kd8mWq2ZrT5yVb3NcE7uGh');
      expect(write.outcomes.find((o) => o.hookId === 'garbage')).toMatchObject({ status: 'failed', failureReason: 'invalid_result' });
      // PermissionRequest has no tool_use_id: find it by point.
      const permission = ledger.sqlite.prepare(`SELECT raw_json, event_name FROM invocations WHERE point = 'permission_request'`).get() as {
        raw_json: string;
        event_name: string;
      };
      expect(JSON.parse(permission.raw_json).permission_suggestions).toHaveLength(1);
      expect(permission.event_name).toBe('PermissionRequest');
    } finally {
      ledger.close();
    }
    // Background hooks were drained before each process exited.
    expect(readFileSync(recordFile, 'utf8').trim().split('\n').sort()).toEqual(
      [
        'toolu_01Ab3dFg6HjK9LmN2PqR5StU',
        'toolu_01Bc4eGh7JkL0MnP3QrS6TuV',
        'toolu_01Cd5fHi8KlM1NoQ4RsT7UvW',
        'toolu_01Pz4eLs9QwX6cJt2RbY8nMf',
      ].map((id) => `"tool_use_id":"${id}"`),
    );
  }, 120_000);

  it('a modified input without a decision is sent back as updatedInput with ask', async () => {
    const dir = tempDir();
    const payload = {
      hook_event_name: 'PreToolUse',
      session_id: 's',
      tool_name: 'Bash',
      tool_use_id: 'toolu_pub',
      tool_input: { command: 'npm publish' },
    };
    const result = await runCli(['claude', '--config', writeConfig(dir), '--db', join(dir, 'l.db')], { input: JSON.stringify(payload) });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'ask',
        permissionDecisionReason: expect.stringContaining('dry-publish rewrote this call'),
        updatedInput: { command: 'npm publish --dry-run' },
      },
    });
  });

  it('unknown events and unknown fields are recorded, not rejected', async () => {
    const dir = tempDir();
    const db = join(dir, 'l.db');
    const payload = { hook_event_name: 'SomeFutureEvent', session_id: 's-9', teammate_name: 'reviewer', brand_new_field: { x: 1 } };
    const result = await runCli(['claude', '--config', writeConfig(dir), '--db', db], { input: JSON.stringify(payload) });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(result.stdout)).toEqual({});
    const ledger = SqliteLedger.open({ path: db });
    const row = ledger.sqlite.prepare('SELECT point, event_name, raw_json FROM invocations').get() as {
      point: string;
      event_name: string;
      raw_json: string;
    };
    ledger.close();
    expect(row).toMatchObject({ point: 'other', event_name: 'SomeFutureEvent' });
    expect(JSON.parse(row.raw_json)).toEqual(payload);
  });
});

describe('hookledger claude: when hookledger itself cannot decide', () => {
  const rm = readFileSync(join(FIXTURES, '01-pretooluse-bash-rm.json'), 'utf8');
  const post = readFileSync(join(FIXTURES, '09-posttooluse-bash.json'), 'utf8');

  it.each([
    ['a missing config', (dir: string) => ['--config', join(dir, 'nope.json'), '--db', join(dir, 'l.db')], /config file not found/],
    [
      'an invalid config',
      (dir: string) => {
        writeFileSync(join(dir, 'bad.json'), '{"name":"x","hooks":[{"id":"a","point":"pre_tool_use","capability":"guardrail"}]}');
        return ['--config', join(dir, 'bad.json'), '--db', join(dir, 'l.db')];
      },
      /needs exactly one of run, command, http or worker/,
    ],
    ['no --config at all', (dir: string) => ['--db', join(dir, 'l.db')], /--config PATH is required/],
    [
      'an unopenable ledger',
      (dir: string) => ['--config', writeConfig(dir), '--db', join(dir, 'missing-dir', 'l.db')],
      /cannot open ledger .*does not exist/,
    ],
  ])('%s on PreToolUse: deny with the reason, exit 0, one stderr line', async (_label, argsFor, reason) => {
    const dir = tempDir();
    const result = await runCli(['claude', ...argsFor(dir)], { input: rm, env: { HOOKLEDGER_CONFIG: '' } });
    expect(result.code).toBe(0);
    const answer = JSON.parse(result.stdout);
    expect(answer.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
    expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(/^hookledger could not decide: /);
    expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(reason);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });

  it('stdin that is not JSON: exit 2 with the reason on stderr (the event is unknown)', async () => {
    const dir = tempDir();
    const result = await runCli(['claude', '--config', writeConfig(dir), '--db', join(dir, 'l.db')], { input: 'hello' });
    expect(result.code).toBe(2);
    expect(result.stdout.trim()).toBe('{}');
    expect(result.stderr.trim()).toMatch(/^hookledger could not decide: stdin: not valid JSON/);
    // Nothing to record: the ledger is not even opened.
    expect(existsSync(join(dir, 'l.db'))).toBe(false);
  });

  it('a payload with a wrong field type on a blocking event: deny, nothing recorded', async () => {
    const dir = tempDir();
    const result = await runCli(['claude', '--config', writeConfig(dir), '--db', join(dir, 'l.db')], {
      input: JSON.stringify({ hook_event_name: 'UserPromptSubmit', prompt: 42 }),
    });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      decision: 'block',
      reason: 'hookledger could not decide: stdin: prompt: prompt must be a string',
    });
  });

  it('non-blocking events: no decision, exit 0, the error on stderr', async () => {
    const dir = tempDir();
    const result = await runCli(['claude', '--config', join(dir, 'nope.json')], { input: post, env: { HOOKLEDGER_DB: join(dir, 'l.db') } });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      systemMessage: expect.stringMatching(/^hookledger could not decide: .*config file not found/),
    });
    expect(result.stderr).toMatch(/^hookledger: .*config file not found\n$/);
  });

  it('--on-error allow and HOOKLEDGER_ON_ERROR=allow let a blocking event proceed', async () => {
    const dir = tempDir();
    for (const [args, env] of [
      [['--on-error', 'allow'], {}],
      [[], { HOOKLEDGER_ON_ERROR: 'allow' }],
    ] as const) {
      const result = await runCli(['claude', '--config', join(dir, 'nope.json'), '--db', join(dir, 'l.db'), ...args], { input: rm, env });
      expect(result.code).toBe(0);
      const answer = JSON.parse(result.stdout);
      expect(answer.hookSpecificOutput).toBeUndefined();
      expect(answer.systemMessage).toMatch(/hookledger could not decide: .*proceeding/);
    }
    const typo = await runCli(['claude', '--config', join(dir, 'nope.json'), '--db', join(dir, 'l.db')], {
      input: rm,
      env: { HOOKLEDGER_ON_ERROR: 'alow' },
    });
    expect(JSON.parse(typo.stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(typo.stderr).toMatch(/HOOKLEDGER_ON_ERROR: "alow" is not deny or allow; using deny/);
  });
});

describe('hookledger claude: killed by Claude Code', () => {
  /** Whether any process is left in the group: signal 0 checks without sending anything. */
  const groupAlive = (pgid: number) => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
      throw error;
    }
  };

  it("SIGTERM while a command hook runs: the hook's whole process group is killed and hookledger exits promptly", async () => {
    const dir = tempDir();
    const db = join(dir, 'l.db');
    const pidFile = join(dir, 'hook.pid');
    // The hook leaves a grandchild in its group, then says where it is (pid, pgid from /proc) and waits.
    writeFileSync(
      join(dir, 'hooks.json'),
      JSON.stringify({
        name: 'slow',
        hooks: [
          {
            id: 'sleeper',
            point: 'pre_tool_use',
            capability: 'guardrail',
            timeoutMs: 60_000,
            command: `sleep 60 & echo "$$ $(cut -d' ' -f5 /proc/$$/stat)" > ${pidFile}.tmp && mv ${pidFile}.tmp ${pidFile}; wait`,
          },
        ],
      }),
    );
    const { child, output, exited } = startCli(['claude', '--config', join(dir, 'hooks.json'), '--db', db], { cwd: dir });
    child.stdin!.end(readFileSync(join(FIXTURES, '01-pretooluse-bash-rm.json'), 'utf8'));

    let pgid = 0;
    try {
      for (let waited = 0; !existsSync(pidFile); waited += 50) {
        if (waited > 15_000) throw new Error(`the hook never started; stderr: ${output.stderr}`);
        await sleep(50);
      }
      const [pid, group] = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number);
      pgid = group!;
      // Its own group (not ours), still running.
      expect(pgid).toBe(pid);
      expect(groupAlive(pgid)).toBe(true);

      const sentAt = Date.now();
      child.kill('SIGTERM');
      const result = await exited;
      expect(Date.now() - sentAt).toBeLessThan(5000);
      expect(result).toEqual({ code: 143, signal: null });
      expect(output.stdout).toBe('');
      expect(output.stderr).toBe('hookledger: SIGTERM: exiting; killed 1 running hook process group(s)\n');
      // SIGKILL is delivered at once, but the kernel may take a moment to reap.
      for (let waited = 0; groupAlive(pgid) && waited < 2000; waited += 20) await sleep(20);
      expect(groupAlive(pgid)).toBe(false);
    } finally {
      child.kill('SIGKILL');
      if (pgid > 0 && groupAlive(pgid)) process.kill(-pgid, 'SIGKILL');
    }

    // The next open marks the abandoned invocation, as for any crash.
    const ledger = SqliteLedger.open({ path: db });
    try {
      expect(ledger.sqlite.prepare('SELECT status FROM invocations').pluck().all()).toEqual(['interrupted']);
    } finally {
      ledger.close();
    }
  }, 60_000);
});
