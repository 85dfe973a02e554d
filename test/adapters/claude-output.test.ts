import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { invocationFromClaude } from '../../src/adapters/claude-input.js';
import { claudeAnswer, claudeHttpBody, internalFailureAnswer, isBlockingEvent } from '../../src/adapters/claude-output.js';
import type { HookDefinition } from '../../src/domain/hooks.js';
import { ask, allow, deny, modify } from '../../src/domain/results.js';
import { setup } from '../helpers.js';
import { protocolProblems } from './protocol.js';

const FIXTURES = join(import.meta.dirname, '../fixtures/claude-code');
const fixture = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), 'utf8')) as Record<string, unknown>;

/** Runs a Claude payload through a real runner and ledger, and builds the answer. */
async function answerFor(payload: Record<string, unknown>, hooks: HookDefinition[]) {
  const { runner } = setup(hooks);
  const report = await runner.run(invocationFromClaude(payload));
  const answer = claudeAnswer(report, payload.hook_event_name as string);
  expect(protocolProblems(payload.hook_event_name as string, answer.json)).toEqual([]);
  return { report, answer };
}

const guard = (id: string, run: HookDefinition['run'], extra: Partial<HookDefinition> = {}): HookDefinition => ({
  id,
  point: [
    'pre_tool_use',
    'permission_request',
    'post_tool_use',
    'user_prompt_submit',
    'stop',
    'subagent_stop',
    'session_start',
    'other',
    'pre_compact',
    'task_completed',
    'teammate_idle',
    'worktree_create',
    'elicitation',
    'config_change',
    'permission_denied',
    'notification',
  ],
  capability: 'guardrail',
  run,
  ...extra,
});

describe('claudeAnswer: PreToolUse', () => {
  const rm = fixture('01-pretooluse-bash-rm.json');

  it('deny names the decisive hook, its reason code and message, and the invocation for explain', async () => {
    const { report, answer } = await answerFor(rm, [
      guard('allow-all', () => allow('fine'), { priority: 1 }),
      guard('block-destructive-rm', () => deny('recursive delete outside the build dir', 'safety_violation'), { priority: 2 }),
    ]);
    expect(answer.exitCode).toBe(0);
    expect(answer.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: `[hookledger] denied by block-destructive-rm (safety_violation): recursive delete outside the build dir (hookledger explain ${report.invocationId})`,
      },
    });
  });

  it('deny beats ask beats allow', async () => {
    const asked = await answerFor(rm, [guard('a', () => allow()), guard('b', () => ask('sure?')), guard('c', () => allow())]);
    expect(asked.answer.json.hookSpecificOutput).toMatchObject({
      permissionDecision: 'ask',
      permissionDecisionReason: expect.stringContaining('confirmation asked by b: sure?'),
    });
    const allowed = await answerFor(rm, [guard('a', () => allow('ok by me'))]);
    expect(allowed.answer.json.hookSpecificOutput).toMatchObject({
      permissionDecision: 'allow',
      permissionDecisionReason: expect.stringContaining('allowed by a: ok by me'),
    });
  });

  it('no opinion and no modification: no decision at all', async () => {
    const { answer } = await answerFor(rm, [
      guard('quiet', () => undefined),
      { id: 'watch', point: 'pre_tool_use', run: () => deny('observers cannot deny') },
    ]);
    expect(answer).toEqual({ exitCode: 0, json: {}, stderr: null });
  });

  it('a modification without a decision asks the user to confirm the rewritten input', async () => {
    const { answer } = await answerFor(rm, [
      guard('safe-rm', (inv) => modify({ ...(inv.toolInput as object), command: 'rm -rf ./dist' }, 'keep the cache')),
    ]);
    expect(answer.json.hookSpecificOutput).toMatchObject({
      permissionDecision: 'ask',
      permissionDecisionReason: expect.stringContaining('safe-rm rewrote this call'),
      updatedInput: { command: 'rm -rf ./dist', description: 'Remove build output and cache', timeout: 120000, run_in_background: false },
    });
  });

  it('a modification with an allow goes out as updatedInput + allow', async () => {
    const { answer } = await answerFor(rm, [
      guard('safe-rm', (inv) => modify({ ...(inv.toolInput as object), command: 'rm -rf ./dist' })),
      guard('ok', () => allow()),
    ]);
    expect(answer.json.hookSpecificOutput).toMatchObject({ permissionDecision: 'allow', updatedInput: { command: 'rm -rf ./dist' } });
  });

  it('a modified input that is not an object is denied, never sent as updatedInput', async () => {
    // The runner is meant to reject such a modify; the answer must fail closed regardless, because
    // Claude Code drops a whole answer whose updatedInput is not an object and runs the call.
    const permission = fixture('08-permissionrequest-bash.json');
    const cases = [
      [rm, [guard('rewrite', (inv) => modify({ ...(inv.toolInput as object), command: 'ls' }, 'safer'))]],
      [rm, [guard('rewrite', (inv) => modify({ ...(inv.toolInput as object), command: 'ls' })), guard('ok', () => allow())]],
      [permission, [guard('rewrite', (inv) => modify({ ...(inv.toolInput as object), command: 'ls' })), guard('ok', () => allow())]],
      [permission, [guard('rewrite', (inv) => modify({ ...(inv.toolInput as object), command: 'ls' }))]],
    ] as const;
    for (const [payload, hooks] of cases) {
      const { report } = await answerFor(payload, [...hooks]);
      for (const [bad, what] of [
        ['ls', 'a string'],
        [['ls'], 'an array'],
        [7, 'a number'],
      ] as const) {
        const event = payload.hook_event_name as string;
        const answer = claudeAnswer({ ...report, modifiedInput: bad }, event);
        expect(protocolProblems(event, answer.json)).toEqual([]);
        const reason = `[hookledger] denied: rewrite rewrote the tool input as ${what}, but Claude Code only accepts an object as updatedInput (hookledger explain ${report.invocationId})`;
        expect(answer).toEqual({
          exitCode: 0,
          json: {
            hookSpecificOutput:
              event === 'PreToolUse'
                ? { hookEventName: event, permissionDecision: 'deny', permissionDecisionReason: reason }
                : { hookEventName: event, decision: { behavior: 'deny', message: reason } },
          },
          stderr: null,
        });
      }
    }
  });

  it('additionalContext from several hooks is joined in execution order', async () => {
    const { answer } = await answerFor(rm, [
      guard('one', () => ({ additionalContext: 'first' })),
      { id: 'two', point: 'pre_tool_use', run: () => ({ additionalContext: 'second' }) },
    ]);
    expect(answer.json).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'first\n\nsecond' } });
  });
});

describe('claudeAnswer: a decision that also rewrites the input', () => {
  it('PreToolUse ask with a replacement: the user confirms the rewritten call', async () => {
    const { answer } = await answerFor(fixture('01-pretooluse-bash-rm.json'), [
      guard('sanitise', () => ({ decision: 'ask', message: 'confirm the narrowed delete', input: { command: 'rm -ri ./build' } })),
    ]);
    expect(answer.json).toMatchObject({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', updatedInput: { command: 'rm -ri ./build' } },
    });
  });

  it('PermissionRequest allow with a replacement: approved, with the rewrite', async () => {
    const { answer } = await answerFor(fixture('08-permissionrequest-bash.json'), [
      guard('dry-run', () => ({ decision: 'allow', input: { command: 'npm publish --dry-run' } })),
    ]);
    expect(answer.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'allow', updatedInput: { command: 'npm publish --dry-run' } },
      },
    });
  });
});

describe('claudeAnswer: other events', () => {
  const permission = fixture('08-permissionrequest-bash.json');

  it('PermissionRequest: deny and allow as decision.behavior; ask shows the normal dialog', async () => {
    const denied = await answerFor(permission, [
      guard('no-publish', () => deny('no publishing from agents', 'policy_violation', { interrupt: true })),
    ]);
    expect(denied.answer.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: {
          behavior: 'deny',
          message: expect.stringContaining('denied by no-publish (policy_violation): no publishing from agents'),
          interrupt: true,
        },
      },
    });
    const allowed = await answerFor(permission, [
      guard('dry', (inv) => modify({ ...(inv.toolInput as object), command: 'npm publish --dry-run' })),
      guard('ok', () => allow()),
    ]);
    expect(allowed.answer.json).toEqual({
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'allow', updatedInput: { command: 'npm publish --dry-run', description: 'Publish package to npm' } },
      },
    });
    const asked = await answerFor(permission, [guard('hmm', () => ask('look closely'))]);
    expect(asked.answer.json).toEqual({});
  });

  it('UserPromptSubmit and PreCompact: deny is a top-level block with the reason', async () => {
    for (const event of ['UserPromptSubmit', 'PreCompact']) {
      const { answer } = await answerFor({ hook_event_name: event, session_id: 's', prompt: 'deploy to prod' }, [
        guard('no-prod', () => deny('not from a chat')),
      ]);
      expect(answer.json).toEqual({
        decision: 'block',
        reason: expect.stringContaining('denied by no-prod (policy_violation): not from a chat'),
      });
    }
  });

  it('UserPromptSubmit: a rewritten prompt is blocked, since Claude Code would send the original', async () => {
    const prompt = { hook_event_name: 'UserPromptSubmit', session_id: 's', prompt: 'deploy with key sk-live-123' };
    const redact = guard('redact-secrets', (inv) => modify(inv.prompt!.replace(/sk-live-\w+/, '[redacted]'), 'removed an API key'));
    for (const hooks of [[redact], [redact, guard('ok', () => allow())], [guard('hmm', () => ask('sure?')), redact]]) {
      const { report, answer } = await answerFor(prompt, hooks);
      expect(report.modifiedInput).toBe('deploy with key [redacted]');
      const reason = `[hookledger] denied: redact-secrets rewrote the prompt (removed an API key), and Claude Code cannot take a rewritten input (hookledger explain ${report.invocationId})`;
      expect(answer).toEqual({ exitCode: 0, json: { decision: 'block', reason, systemMessage: reason }, stderr: null });
    }
    // Several rewrites name every hook with its reason; one without a reason adds none.
    const two = await answerFor(prompt, [redact, guard('trim', (inv) => modify(inv.prompt!.trim()))]);
    expect(two.answer.json.reason).toMatch(
      /^\[hookledger\] denied: redact-secrets, trim rewrote the prompt \(redact-secrets: removed an API key\), /,
    );
    // A deny keeps its own reason; an observer's modify is not applied, so nothing is blocked.
    const denied = await answerFor(prompt, [redact, guard('no', () => deny('not from a chat'))]);
    expect(denied.answer.json).toEqual({
      decision: 'block',
      reason: expect.stringContaining('denied by no (policy_violation): not from a chat'),
    });
    const observed = await answerFor(prompt, [{ id: 'watch', point: 'user_prompt_submit', run: (inv) => modify(`${inv.prompt} !`) }]);
    expect(observed.answer.json).toEqual({});
  });

  it('Stop / SubagentStop: the block reason carries the context, no hookSpecificOutput', async () => {
    for (const event of ['Stop', 'SubagentStop']) {
      const { answer } = await answerFor({ hook_event_name: event, stop_hook_active: false }, [
        guard('ctx', () => ({ additionalContext: 'tests are red' })),
        guard('keep-going', () => deny('run the tests first')),
      ]);
      expect(answer.json).toEqual({
        decision: 'block',
        reason: expect.stringMatching(/denied by keep-going .*run the tests first[^]*\n\ntests are red$/),
      });
    }
  });

  it('PostToolUse: a deny is feedback next to the result; context goes to hookSpecificOutput', async () => {
    const post = fixture('09-posttooluse-bash.json');
    const fed = await answerFor(post, [guard('lint', () => deny('tests were run without coverage'))]);
    expect(fed.answer.json).toMatchObject({ decision: 'block', reason: expect.stringContaining('tests were run without coverage') });
    const ctx = await answerFor(post, [guard('note', () => ({ additionalContext: '17 tests passed' }))]);
    expect(ctx.answer.json).toEqual({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: '17 tests passed' } });
  });

  it('events that cannot block: a deny is recorded and logged, the answer has no decision', async () => {
    const { answer } = await answerFor({ hook_event_name: 'SessionStart', source: 'startup' }, [
      guard('g', () => deny('no sessions on Fridays')),
    ]);
    expect(answer.exitCode).toBe(0);
    expect(answer.json).toEqual({});
    expect(answer.stderr).toMatch(/no sessions on Fridays .*SessionStart cannot be blocked; recorded only/);
  });

  it('blocking events without a JSON block (TaskCompleted): exit 2 with the reason', async () => {
    const { report, answer } = await answerFor({ hook_event_name: 'TaskCompleted', task_id: 't1' }, [
      guard('not-done', () => deny('tests still fail')),
    ]);
    expect(report.point).toBe('task_completed');
    expect(answer).toMatchObject({
      exitCode: 2,
      json: {},
      stderr: expect.stringContaining('denied by not-done (policy_violation): tests still fail'),
    });
    expect(claudeHttpBody(answer)).toMatchObject({ continue: false, stopReason: answer.stderr });
  });

  it('ask where the event can block but not ask blocks it, saying confirmation was required', async () => {
    const { report, answer } = await answerFor({ hook_event_name: 'UserPromptSubmit', prompt: 'x' }, [
      guard('hmm', () => ask('this prompt mentions prod')),
    ]);
    const text = `[hookledger] denied: hmm requires confirmation (this prompt mentions prod), and Claude Code cannot ask at UserPromptSubmit (hookledger explain ${report.invocationId})`;
    expect(answer).toEqual({ exitCode: 0, json: { decision: 'block', reason: text, systemMessage: text }, stderr: null });
    // Each blocking form: exit 2 (and continue: false over http), an elicitation declined.
    const idle = await answerFor({ hook_event_name: 'TeammateIdle', teammate_name: 'r' }, [guard('hmm', () => ask('sure?'))]);
    expect(idle.answer).toMatchObject({ exitCode: 2, stderr: expect.stringContaining('hmm requires confirmation (sure?)') });
    expect(claudeHttpBody(idle.answer)).toMatchObject({ continue: false });
    const elicit = await answerFor({ hook_event_name: 'Elicitation', mcp_server_name: 'gh' }, [guard('hmm', () => ask('sure?'))]);
    expect(elicit.answer.json).toMatchObject({ hookSpecificOutput: { action: 'decline' } });
  });

  it('ask where the event can neither block nor ask: a systemMessage and a stderr line, the event proceeds', async () => {
    const { answer } = await answerFor({ hook_event_name: 'Notification', message: 'm' }, [guard('hmm', () => ask('look at this'))]);
    expect(answer.json).toEqual({ systemMessage: expect.stringContaining('confirmation asked by hmm: look at this') });
    expect(answer.stderr).toMatch(/Notification can neither ask nor block; shown to the user, the event proceeds$/);
  });

  it('PermissionDenied: an allow is retry: true; WorktreeCreate answers the allowed path', async () => {
    const retry = await answerFor({ hook_event_name: 'PermissionDenied', tool_name: 'Bash', tool_input: {} }, [guard('ok', () => allow())]);
    expect(retry.answer.json).toEqual({ hookSpecificOutput: { hookEventName: 'PermissionDenied', retry: true } });
    const made = await answerFor({ hook_event_name: 'WorktreeCreate', name: 'w' }, [guard('mk', () => allow('/tmp/wt/w'))]);
    expect(made.answer).toEqual({
      exitCode: 0,
      json: { hookSpecificOutput: { hookEventName: 'WorktreeCreate', worktreePath: '/tmp/wt/w' } },
      stderr: null,
    });
    const none = await answerFor({ hook_event_name: 'WorktreeCreate', name: 'w' }, []);
    expect(none.answer).toMatchObject({
      exitCode: 2,
      stderr: expect.stringMatching(/worktree not created: no hook at worktree_create answered allow/),
    });
  });

  it('every shared fixture gets a protocol-valid answer', async () => {
    for (const name of readdirSync(FIXTURES).filter((f) => f.endsWith('.json'))) {
      await answerFor(fixture(name), [
        guard('ctx', () => ({ additionalContext: `ctx for ${name}` })),
        guard('no', () => deny(`denied ${name}`)),
      ]);
      await answerFor(fixture(name), [guard('ctx', () => ({ additionalContext: 'only context' }))]);
    }
  });
});

describe('internalFailureAnswer', () => {
  it.each([
    [
      'PreToolUse',
      {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: 'hookledger could not decide: config broken',
        },
      },
    ],
    [
      'PermissionRequest',
      {
        hookSpecificOutput: {
          hookEventName: 'PermissionRequest',
          decision: { behavior: 'deny', message: 'hookledger could not decide: config broken' },
        },
      },
    ],
    [
      'UserPromptSubmit',
      {
        decision: 'block',
        reason: 'hookledger could not decide: config broken',
        systemMessage: 'hookledger could not decide: config broken',
      },
    ],
    [
      'Stop',
      {
        decision: 'block',
        reason: 'hookledger could not decide: config broken',
        systemMessage: 'hookledger could not decide: config broken',
      },
    ],
    [
      'SubagentStop',
      {
        decision: 'block',
        reason: 'hookledger could not decide: config broken',
        systemMessage: 'hookledger could not decide: config broken',
      },
    ],
    [
      'PreCompact',
      {
        decision: 'block',
        reason: 'hookledger could not decide: config broken',
        systemMessage: 'hookledger could not decide: config broken',
      },
    ],
  ])('deny policy on blocking event %s answers deny in its format', (event, json) => {
    const answer = internalFailureAnswer(event, 'config\n  broken', 'deny');
    expect(answer).toEqual({ exitCode: 0, json, stderr: 'hookledger: config broken' });
    expect(protocolProblems(event, answer.json)).toEqual([]);
  });

  it('non-blocking events and the allow policy give no decision; the user still sees why', () => {
    for (const [event, policy] of [
      ['PostToolUse', 'deny'],
      ['SessionStart', 'deny'],
      ['PreToolUse', 'allow'],
    ] as const) {
      const answer = internalFailureAnswer(event, 'ledger locked', policy);
      expect(answer.exitCode).toBe(0);
      expect(answer.json).toEqual({ systemMessage: expect.stringContaining('hookledger could not decide: ledger locked') });
      expect(answer.stderr).toBe('hookledger: ledger locked');
    }
  });

  it('an unknown event (stdin unreadable) under deny exits 2; TaskCompleted too', () => {
    expect(internalFailureAnswer(null, 'stdin: not valid JSON', 'deny')).toEqual({
      exitCode: 2,
      json: {},
      stderr: 'hookledger could not decide: stdin: not valid JSON',
    });
    expect(internalFailureAnswer('TeammateIdle', 'x', 'deny').exitCode).toBe(2);
    expect(isBlockingEvent('Notification')).toBe(false);
    expect(isBlockingEvent('PreToolUse')).toBe(true);
  });
});
