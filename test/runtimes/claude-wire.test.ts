import { pointForClaudeEvent } from '../../src/domain/points.js';
import { describe, expect, it } from 'vitest';
import { withModifiedInput } from '../../src/domain/invocation.js';
import type { Point } from '../../src/domain/points.js';
import { parseHookResult } from '../../src/domain/results.js';
import {
  claudeEventName,
  readClaudeHookOutput,
  readClaudeJsonOutput,
  toClaudePayload,
  type ProcessOutput,
} from '../../src/runtimes/claude-wire.js';
import { HookExecutionFailure } from '../../src/runtimes/types.js';
import { makeContext, makeHook, makeInvocation } from './helpers.js';

const hook = makeHook({ id: 'guard', command: 'true' });
const { ctx } = makeContext(hook);

function exit0(stdout: string, point: Point = 'pre_tool_use'): unknown {
  return readClaudeHookOutput({ exitCode: 0, signal: null, stdout, stderr: '' }, point, 'guard');
}
function json(value: unknown, point: Point = 'pre_tool_use'): unknown {
  return exit0(JSON.stringify(value), point);
}
/** Every answer the wire produces must be one the runner accepts. */
function valid(value: unknown): unknown {
  const parsed = parseHookResult(value);
  expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
  return value;
}
function failureOf(run: () => unknown): HookExecutionFailure {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(HookExecutionFailure);
    return error as HookExecutionFailure;
  }
  throw new Error('expected a HookExecutionFailure');
}

describe('toClaudePayload', () => {
  it('passes a Claude payload through with the current values on top', () => {
    const raw = {
      session_id: 's-1',
      transcript_path: '/tmp/t.jsonl',
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_01',
      cwd: '/home/dev/app',
    };
    const invocation = withModifiedInput(makeInvocation({ raw, cwd: '/home/dev/app' }), { command: 'ls -la' });
    const payload = toClaudePayload(invocation, ctx);
    expect(payload).toEqual({
      session_id: 's-1',
      transcript_path: '/tmp/t.jsonl',
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls -la' },
      tool_use_id: 'toolu_01',
      cwd: '/home/dev/app',
      hookledger: { invocationId: 42, hookId: 'guard', replay: false, point: 'pre_tool_use' },
    });
    // Raw keys come first so a reader sees the agent's field order.
    expect(Object.keys(payload).slice(0, 3)).toEqual(['session_id', 'transcript_path', 'permission_mode']);
  });

  it('omits null fields, including stale raw copies of them', () => {
    const invocation = makeInvocation({
      toolUseId: null,
      raw: { hook_event_name: 'PermissionRequest', tool_use_id: 'stale' },
      eventName: 'PermissionRequest',
      point: 'permission_request',
    });
    const payload = toClaudePayload(invocation, ctx);
    expect(payload).not.toHaveProperty('tool_use_id');
    expect(payload).not.toHaveProperty('prompt');
    expect(payload).not.toHaveProperty('error');
    expect(payload).not.toHaveProperty('tool_response');
    expect(payload.hook_event_name).toBe('PermissionRequest');
  });

  it('names the event after the point for other agents and ignores their raw event', () => {
    const invocation = makeInvocation({ agent: 'meerkat', eventName: 'pre_tool_execution', raw: { runId: 'r1' } });
    const payload = toClaudePayload(invocation, { ...ctx, replay: true, invocationId: null });
    expect(payload.hook_event_name).toBe('PreToolUse');
    expect(payload).not.toHaveProperty('runId');
    expect(payload.hookledger).toEqual({ invocationId: null, hookId: 'guard', replay: true, point: 'pre_tool_use' });
  });

  it('tells Codex and Gemini CLI hooks their own event names, with the raw payload fields', () => {
    const gemini = makeInvocation({
      agent: 'gemini-cli',
      eventName: 'BeforeTool',
      raw: { hook_event_name: 'BeforeTool', mcp_context: null },
    });
    expect(toClaudePayload(gemini, ctx)).toMatchObject({ hook_event_name: 'BeforeTool', mcp_context: null });
    expect(claudeEventName(makeInvocation({ agent: 'codex', eventName: 'PostCompact', point: 'other' }))).toBe('PostCompact');
  });

  it('falls back to the point name when Claude Code has no such event, and keeps unknown Claude events', () => {
    expect(claudeEventName(makeInvocation({ point: 'pre_llm_request', agent: 'sdk', eventName: null }))).toBe('pre_llm_request');
    expect(claudeEventName(makeInvocation({ point: 'other', eventName: 'WorktreeCreate' }))).toBe('WorktreeCreate');
    const prompt = toClaudePayload(
      makeInvocation({ point: 'user_prompt_submit', eventName: null, toolName: null, toolInput: null, toolUseId: null, prompt: 'hi' }),
      ctx,
    );
    expect(prompt).toMatchObject({ hook_event_name: 'UserPromptSubmit', prompt: 'hi' });
    expect(prompt).not.toHaveProperty('tool_name');
  });
});

describe('pointForClaudeEvent', () => {
  it('maps known events and sends everything else to other', () => {
    expect(pointForClaudeEvent('PreToolUse')).toBe('pre_tool_use');
    expect(pointForClaudeEvent('StopFailure')).toBe('error');
    expect(pointForClaudeEvent('WorktreeCreate')).toBe('worktree_create');
    expect(pointForClaudeEvent('SomeFutureEvent')).toBe('other');
    expect(pointForClaudeEvent('constructor')).toBe('other');
  });
});

describe('readClaudeHookOutput: exit codes', () => {
  const out = (o: Partial<ProcessOutput>): ProcessOutput => ({ exitCode: 0, signal: null, stdout: '', stderr: '', ...o });

  it('exit 2 denies with stderr as the reason', () => {
    expect(valid(readClaudeHookOutput(out({ exitCode: 2, stderr: '  no rm here \n' }), 'pre_tool_use'))).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'no rm here',
    });
  });

  it('exit 2 prefers a reason in stdout JSON, caps stderr, and has a default', () => {
    const fromJson = readClaudeHookOutput(
      out({ exitCode: 2, stdout: '{"hookSpecificOutput":{"permissionDecisionReason":"from json"}}', stderr: 'from stderr' }),
      'pre_tool_use',
    );
    expect(fromJson).toMatchObject({ decision: 'deny', message: 'from json' });
    const long = readClaudeHookOutput(out({ exitCode: 2, stderr: 'x'.repeat(5000) }), 'pre_tool_use') as { message: string };
    expect(long.message).toHaveLength(2000);
    expect(valid(readClaudeHookOutput(out({ exitCode: 2, stdout: '{broken' }), 'pre_tool_use', 'guard'))).toMatchObject({
      message: 'hook "guard" exited 2',
    });
  });

  it('other exit codes and signals are execution failures with a one-line stderr excerpt', () => {
    const failure = failureOf(() =>
      readClaudeHookOutput(out({ exitCode: 1, stderr: 'Traceback:\n   at  line 3\n' + 'y'.repeat(1000) }), 'pre_tool_use'),
    );
    expect(failure.reason).toBe('execution_failed');
    expect(failure.detail.startsWith('exited with code 1: Traceback: at line 3 yyy')).toBe(true);
    expect(failure.detail.length).toBe('exited with code 1: '.length + 500);
    expect(failureOf(() => readClaudeHookOutput(out({ exitCode: 127 }), 'pre_tool_use')).detail).toBe('exited with code 127');
    const killed = failureOf(() => readClaudeHookOutput(out({ exitCode: null, signal: 'SIGTERM', stderr: 'bye' }), 'pre_tool_use'));
    expect(killed.detail).toBe('killed by SIGTERM: bye');
  });

  it('exit 0 with nothing, or plain text at a tool point, is no opinion', () => {
    expect(exit0('')).toBeUndefined();
    expect(exit0(' \n\t')).toBeUndefined();
    expect(exit0('all good\n')).toBeUndefined();
    expect(exit0('[1,2]')).toBeUndefined();
  });

  it('plain text becomes context where Claude Code injects it, capped at 10,000 chars', () => {
    expect(valid(exit0('use pnpm\n', 'user_prompt_submit'))).toEqual({ additionalContext: 'use pnpm' });
    const long = exit0('z'.repeat(20_000), 'session_start') as { additionalContext: string };
    expect(long.additionalContext).toHaveLength(10_000);
  });
});

describe('readClaudeHookOutput: JSON output', () => {
  it('maps permissionDecision', () => {
    expect(
      valid(json({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'nope' } })),
    ).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'nope',
    });
    expect(valid(json({ hookSpecificOutput: { permissionDecision: 'deny' } }))).toMatchObject({ message: 'denied by hook "guard"' });
    expect(valid(json({ hookSpecificOutput: { permissionDecision: 'ask', permissionDecisionReason: 'sure?' } }))).toEqual({
      decision: 'ask',
      message: 'sure?',
    });
    expect(valid(json({ hookSpecificOutput: { permissionDecision: 'ask' } }))).toMatchObject({
      decision: 'ask',
      message: expect.stringContaining('guard'),
    });
    expect(valid(json({ hookSpecificOutput: { permissionDecision: 'allow', permissionDecisionReason: 'fine' } }))).toEqual({
      decision: 'allow',
      message: 'fine',
    });
    expect(json({ hookSpecificOutput: { permissionDecision: 'defer', permissionDecisionReason: 'later' } })).toBeUndefined();
    expect(json({ hookSpecificOutput: { permissionDecision: 'allow', permissionDecisionReason: '' } })).toEqual({ decision: 'allow' });
  });

  it('keeps updatedInput next to allow and ask, makes it a modify on its own, and drops it under deny', () => {
    const updatedInput = { command: 'ls --dry-run' };
    // allow + updatedInput: the rewrite, auto-approved, as Claude Code would run it.
    expect(valid(json({ hookSpecificOutput: { permissionDecision: 'allow', permissionDecisionReason: 'dry', updatedInput } }))).toEqual({
      decision: 'allow',
      message: 'dry',
      input: updatedInput,
    });
    // ask + updatedInput: the user confirms the rewritten call, not the original.
    expect(valid(json({ hookSpecificOutput: { permissionDecision: 'ask', permissionDecisionReason: 'check', updatedInput } }))).toEqual({
      decision: 'ask',
      message: 'check',
      input: updatedInput,
    });
    expect(valid(json({ hookSpecificOutput: { updatedInput } }))).toEqual({ decision: 'modify', input: updatedInput });
    expect(valid(json({ hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'no', updatedInput } }))).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'no',
    });
  });

  it('reads the legacy top-level decision', () => {
    expect(valid(json({ decision: 'block', reason: 'legacy no' }))).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'legacy no',
    });
    expect(valid(json({ decision: 'approve', reason: 'legacy yes' }))).toEqual({ decision: 'allow', message: 'legacy yes' });
    // The most restrictive answer in one output wins.
    expect(json({ decision: 'block', reason: 'r', hookSpecificOutput: { permissionDecision: 'allow' } })).toMatchObject({
      decision: 'deny',
    });
  });

  it("reads PermissionRequest's decision.behavior", () => {
    const point = 'permission_request';
    expect(valid(json({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } }, point))).toEqual({
      decision: 'allow',
    });
    expect(valid(json({ hookSpecificOutput: { decision: { behavior: 'deny', message: 'not today', interrupt: true } } }, point))).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'not today',
      payload: { interrupt: true },
    });
    expect(valid(json({ hookSpecificOutput: { decision: { behavior: 'allow', updatedInput: { command: 'x' } } } }, point))).toEqual({
      decision: 'allow',
      input: { command: 'x' },
    });
  });

  it('continue: false denies with stopReason, over any allow', () => {
    expect(valid(json({ continue: false, stopReason: 'halt', hookSpecificOutput: { permissionDecision: 'allow' } }))).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'halt',
    });
    expect(valid(json({ continue: false }))).toMatchObject({ decision: 'deny', message: expect.stringContaining('continue: false') });
  });

  it('continue: false on Stop / SubagentStop lets the stop happen: no opinion, the reason kept as context', () => {
    for (const point of ['stop', 'subagent_stop'] as const) {
      // A deny there would block the stop and keep Claude working: the opposite of the ask.
      expect(valid(json({ continue: false, stopReason: 'budget spent', decision: 'block', reason: 'x' }, point))).toEqual({
        additionalContext: 'hook "guard" asked Claude to stop (continue: false): budget spent',
      });
      expect(valid(json({ continue: false, additionalContext: 'ctx' }, point))).toEqual({
        additionalContext: 'ctx\n\nhook "guard" asked Claude to stop (continue: false)',
      });
    }
  });

  it('carries additionalContext and ignores systemMessage', () => {
    expect(valid(json({ hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'nested' } }, 'post_tool_use'))).toEqual({
      additionalContext: 'nested',
    });
    expect(
      valid(
        json({
          additionalContext: 'top',
          hookSpecificOutput: { permissionDecision: 'deny', permissionDecisionReason: 'x', additionalContext: 'nested' },
        }),
      ),
    ).toMatchObject({
      decision: 'deny',
      additionalContext: 'nested\n\ntop',
    });
    expect(json({ systemMessage: 'shown to the user', suppressOutput: true, somethingNew: 1 })).toBeUndefined();
    expect(json({ decision: null, reason: null })).toBeUndefined();
  });

  it('rejects output that is not JSON, with the start of what was printed', () => {
    const failure = failureOf(() => exit0('{not json at all'));
    expect(failure.reason).toBe('invalid_result');
    expect(failure.detail).toMatch(/^stdout is not valid JSON: .+; starts with: \{not json at all$/);
  });

  it("reads Gemini CLI's flat decisions (deny, allow, ask) like Claude Code's block and approve", () => {
    expect(valid(json({ decision: 'deny', reason: 'no' }))).toMatchObject({ decision: 'deny', message: 'no' });
    expect(valid(json({ decision: 'ask', reason: 'sure?' }))).toMatchObject({ decision: 'ask', message: 'sure?' });
    expect(valid(json({ decision: 'allow' }))).toMatchObject({ decision: 'allow' });
  });

  it('rejects fields of the wrong type or value, naming the field', () => {
    const bad = failureOf(() => json({ hookSpecificOutput: { permissionDecision: 'block' } }));
    expect(bad.reason).toBe('invalid_result');
    expect(bad.detail).toContain('hookSpecificOutput.permissionDecision');
    expect(bad.detail).toContain('"block"');
    expect(failureOf(() => json({ decision: 'maybe' })).detail).toContain(
      'decision: expected one of block, approve, deny, allow, ask, got "maybe"',
    );
    expect(failureOf(() => json({ continue: 'no' })).detail).toContain('continue: expected a boolean');
    expect(failureOf(() => json({ hookSpecificOutput: { updatedInput: 'rm' } })).detail).toContain(
      'hookSpecificOutput.updatedInput: expected an object',
    );
    expect(failureOf(() => json({ hookSpecificOutput: 'deny' })).detail).toContain('hookSpecificOutput: expected an object');
    expect(failureOf(() => json({ hookSpecificOutput: { decision: { behavior: 'maybe' } } }, 'permission_request')).detail).toContain(
      'hookSpecificOutput.decision.behavior',
    );
  });

  it('rejects permissionDecision at the top level, where Claude Code would silently ignore it', () => {
    const failure = failureOf(() => json({ permissionDecision: 'deny', permissionDecisionReason: 'x' }));
    expect(failure.detail).toContain('permissionDecision must be inside hookSpecificOutput');
  });

  it('readClaudeJsonOutput rejects JSON values that are not objects', () => {
    for (const value of [[], 'deny', 3, null]) {
      const failure = failureOf(() => readClaudeJsonOutput(value, 'pre_tool_use', 'guard', 'response body JSON'));
      expect(failure.reason).toBe('invalid_result');
      expect(failure.detail).toMatch(/^response body JSON: expected a JSON object, got /);
    }
  });
});

describe('readClaudeHookOutput: events with their own answers', () => {
  it('WorktreeCreate: the last stdout line (or worktreePath) is the path, read as an allow', () => {
    expect(exit0('creating\n/tmp/wt/a\n', 'worktree_create')).toEqual({ decision: 'allow', message: '/tmp/wt/a' });
    expect(exit0('{"hookSpecificOutput":{"hookEventName":"WorktreeCreate","worktreePath":"/tmp/wt/b"}}', 'worktree_create')).toEqual({
      decision: 'allow',
      message: '/tmp/wt/b',
    });
    // Elsewhere plain stdout is no opinion, and worktreePath means nothing.
    expect(exit0('/tmp/wt/a', 'pre_tool_use')).toBeUndefined();
  });

  it('UserPromptExpansion: plain stdout is context, as on UserPromptSubmit', () => {
    expect(exit0('expanded with care', 'user_prompt_expansion')).toEqual({ additionalContext: 'expanded with care' });
  });
});
