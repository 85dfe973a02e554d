import { describe, expect, it } from 'vitest';
import { compileMatcher, defineHooks, resolveHookSet } from '../../src/domain/hooks.js';
import { ConfigError } from '../../src/domain/errors.js';
import { parseHookResult } from '../../src/domain/results.js';
import { resolvePoint } from '../../src/domain/points.js';

describe('matchers (Claude Code rules)', () => {
  it.each([
    ['', 'Bash', true],
    ['*', 'Anything', true],
    ['Bash', 'Bash', true],
    ['Bash', 'BashOutput', false],
    ['Edit|Write', 'Write', true],
    ['Edit, Write', 'Edit', true],
    ['Edit|Write', 'NotebookEdit', false],
    ['code-reviewer', 'code-reviewer', true],
    ['Edit.*', 'NotebookEdit', true],
    ['^Edit$', 'NotebookEdit', false],
    ['mcp__github__.*', 'mcp__github__create_issue', true],
    ['bash', 'Bash', false],
  ])('%j on %s → %s', (match, tool, expected) => {
    expect(compileMatcher(match)(tool)).toBe(expected);
  });
});

describe('hook-set validation', () => {
  const base = { id: 'h', point: 'pre_tool_use', run: () => undefined };
  it.each([
    [[base, { ...base }], /hooks\[1\] \(id "h"\): id is a duplicate/],
    [[{ ...base, id: '  ' }], /hooks\[0\]: id: id must not be blank/],
    [[{ ...base, point: 'pre_tool' }], /hooks\[0\] \(id "h"\): point: .*unknown point "pre_tool"/],
    [[{ ...base, match: '(' }], /hooks\[0\] \(id "h"\): match: "\(" is not a valid regular expression/],
    [[{ ...base, timeoutMs: -5 }], /hooks\[0\] \(id "h"\): timeoutMs: timeoutMs must be positive/],
    [[{ ...base, mode: 'background', capability: 'guardrail' }], /id "h"\): capability: a background hook cannot be a guardrail/],
    [[{ ...base, onFailure: 'deny' }], /id "h"\): onFailure: an observer cannot fail closed/],
    [[{ ...base, command: 'true' }], /id "h"\): needs exactly one of run, command, http or worker \(has 2\)/],
    [[{ id: 'x', point: 'session_start', match: 'Bash', command: 'true' }], /match: a tool matcher needs a tool point/],
    [[{ ...base, prority: 3 }], /hooks\[0\] \(id "h"\): \(hook\): Unrecognized key: "prority"/],
  ])('rejects %#', (hooks, message) => {
    expect(() => defineHooks({ name: 't', hooks: hooks as never })).toThrow(ConfigError);
    expect(() => defineHooks({ name: 't', hooks: hooks as never })).toThrow(message);
  });

  it('applies defaults: priority 100, timeout 5000, foreground observer failing open; guardrails fail closed', () => {
    const set = defineHooks({ name: 't', hooks: [base, { ...base, id: 'g', capability: 'guardrail' }] });
    expect(set.hooks[0]).toMatchObject({ priority: 100, timeoutMs: 5000, mode: 'foreground', capability: 'observe', onFailure: 'allow' });
    expect(set.hooks[1]).toMatchObject({ onFailure: 'deny' });
    expect(set.strategy).toBe('deny_wins');
  });

  it('accepts meerkat aliases for points', () => {
    const set = defineHooks({ name: 't', hooks: [{ id: 'a', point: ['run_started', 'pre_tool_execution'], run: () => undefined }] });
    expect(set.hooks[0]!.points).toEqual(['session_start', 'pre_tool_use']);
    expect(resolvePoint('constructor')).toBeUndefined();
  });

  it('fingerprints the canonical form: same definition, same fingerprint; any change, another', () => {
    const a = resolveHookSet({ name: 't', version: '1', hooks: [{ id: 'c', point: 'stop', command: 'echo 1' }] }, 'a');
    const b = resolveHookSet({ version: '1', hooks: [{ command: 'echo 1', point: 'stop', id: 'c' }], name: 't' }, 'b');
    const c = resolveHookSet({ name: 't', version: '1', hooks: [{ id: 'c', point: 'stop', command: 'echo 2' }] }, 'c');
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.fingerprint).not.toBe(c.fingerprint);
    expect(a.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hashes http header values rather than storing secrets in the canonical form', () => {
    const set = resolveHookSet(
      {
        name: 't',
        hooks: [{ id: 'h', point: 'stop', http: { url: 'http://127.0.0.1:1/x', headers: { Authorization: 'Bearer s3cret' } } }],
      },
      'x',
    );
    expect(set.canonical).not.toContain('s3cret');
  });
});

describe('hook results', () => {
  it.each([
    [undefined, 'none'],
    [null, 'none'],
    [{}, 'none'],
    [{ decision: 'allow' }, 'allow'],
    [{ decision: 'deny', message: 'x' }, 'deny'],
    [{ decision: 'modify', input: { a: 1 } }, 'modify'],
  ])('%j is %s', (value, decision) => {
    const parsed = parseHookResult(value);
    expect(parsed.ok && parsed.result.decision).toBe(decision);
  });

  it('a deny defaults its reason code to policy_violation', () => {
    expect(parseHookResult({ decision: 'deny', message: 'x' })).toEqual({
      ok: true,
      result: { decision: 'deny', message: 'x', reasonCode: 'policy_violation' },
    });
  });

  it.each([
    ['yes', /got the string "yes"/],
    [[1], /got an array/],
    [{ decision: 'block' }, /decision: expected allow, deny, ask, modify or none, got the string "block"/],
    [{ decision: 'deny' }, /message/],
    [{ decision: 'ask', message: '' }, /an ask needs a message/],
  ])('%j is invalid', (value, issues) => {
    const parsed = parseHookResult(value);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.issues).toMatch(issues);
  });
});
