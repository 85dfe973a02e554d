import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/open.js';
import { tempDir } from '../helpers.js';
import { runWireCases, type WireCase } from './agent-wire.js';
import { codexProblems } from './codex-protocol.js';

const base = {
  session_id: 'codex-s1',
  turn_id: 't-1',
  transcript_path: null,
  cwd: '/work/app',
  model: 'gpt-5-codex',
  permission_mode: 'default',
};
const tool = (event: string, tool_name: string, tool_input: unknown, extra: Record<string, unknown> = {}) => ({
  ...base,
  hook_event_name: event,
  tool_name,
  tool_input,
  tool_use_id: `call-${Math.random().toString(36).slice(2)}`,
  ...extra,
});
const event = (hook_event_name: string, extra: Record<string, unknown> = {}) => ({ ...base, hook_event_name, ...extra });
const explain = expect.stringMatching(/\(hookledger explain \d+\)$/);
const reason = (re: RegExp) => expect.stringMatching(re);

/** Every event Codex fires, plus what it might send one day, and what it must never get. */
const CASES: WireCase[] = [
  // PreToolUse
  {
    name: 'PreToolUse shell deny (match "Bash" guards Codex shell)',
    viaCli: true,
    input: tool('PreToolUse', 'shell', { command: 'rm -rf /' }),
    exit: 0,
    decision: 'deny',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: reason(
          /^\[hookledger\] denied by no-rm \(safety_violation\): rm -rf is not allowed \(hookledger explain \d+\)$/,
        ),
      },
    },
  },
  {
    name: 'PreToolUse Bash deny (Codex sends the Claude name too)',
    input: tool('PreToolUse', 'Bash', { command: 'rm -rf /tmp/x' }),
    exit: 0,
    decision: 'deny',
    json: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: explain } },
  },
  {
    name: 'PreToolUse matched by the agent’s own tool name',
    input: tool('PreToolUse', 'shell', { command: 'echo own-name' }),
    exit: 0,
    decision: 'deny',
    json: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason(/own-name/) } },
  },
  {
    name: 'PreToolUse ask → deny saying confirmation was required',
    input: tool('PreToolUse', 'exec_command', { command: 'git push origin main' }),
    exit: 0,
    decision: 'ask',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: reason(
          /^\[hookledger\] denied: confirm-push requires confirmation \(pushes need a human\), and Codex cannot ask at PreToolUse \(hookledger explain \d+\)$/,
        ),
      },
    },
  },
  {
    name: 'PreToolUse modify → allow + updatedInput',
    input: tool('PreToolUse', 'shell', { command: 'npm publish', workdir: '/work/app' }),
    exit: 0,
    decision: 'none',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'allow',
        permissionDecisionReason: explain,
        updatedInput: { command: 'npm publish --dry-run', workdir: '/work/app' },
      },
    },
  },
  {
    name: 'PreToolUse bare allow → empty stdout',
    input: tool('PreToolUse', 'shell', { command: 'ls -l' }),
    exit: 0,
    decision: 'allow',
    json: null,
  },
  {
    name: 'PreToolUse no opinion → empty stdout',
    input: tool('PreToolUse', 'shell', { command: 'npm test' }),
    exit: 0,
    decision: 'none',
    json: null,
  },
  {
    name: 'PreToolUse non-object rewrite → deny',
    input: tool('PreToolUse', 'shell', { command: 'stringify' }),
    exit: 0,
    decision: 'deny',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: reason(/denied by to-string \(runtime_error\).*replacement tool input must be an object/),
      },
    },
  },
  {
    name: 'PreToolUse failing hook (fails closed)',
    input: tool('PreToolUse', 'read_file', { path: 'a.ts' }),
    exit: 0,
    decision: 'deny',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: reason(/denied by crash \(runtime_error\)/),
      },
    },
  },
  {
    name: 'PreToolUse timed-out hook (fails closed)',
    input: tool('PreToolUse', 'WebFetch', { url: 'https://example.com' }),
    exit: 0,
    decision: 'deny',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: 'deny',
        permissionDecisionReason: reason(/denied by slow \(timeout\)/),
      },
    },
  },
  {
    name: 'PreToolUse with unknown payload fields',
    input: tool('PreToolUse', 'shell', { command: 'rm -rf /' }, { sandbox: { mode: 'workspace-write' }, future_field: [1, 2] }),
    exit: 0,
    decision: 'deny',
    json: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: explain } },
  },
  {
    name: 'PreToolUse MCP tool, no hook matches',
    input: tool('PreToolUse', 'mcp__github__create_issue', { title: 'x' }),
    exit: 0,
    decision: 'none',
    json: null,
  },
  // PermissionRequest
  {
    name: 'PermissionRequest deny',
    input: tool('PermissionRequest', 'shell', { command: 'sudo make install' }),
    exit: 0,
    decision: 'deny',
    json: {
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: reason(/denied by permission/) } },
    },
  },
  {
    name: 'PermissionRequest allow',
    input: tool('PermissionRequest', 'shell', { command: 'make' }),
    exit: 0,
    decision: 'allow',
    json: { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } },
  },
  {
    name: 'PermissionRequest ask → Codex’s own prompt (empty stdout)',
    input: tool('PermissionRequest', 'shell', { command: 'maybe' }),
    exit: 0,
    decision: 'ask',
    json: null,
  },
  {
    name: 'PermissionRequest rewrite → deny',
    input: tool('PermissionRequest', 'shell', { command: 'npm publish' }),
    exit: 0,
    decision: 'none',
    json: {
      hookSpecificOutput: {
        hookEventName: 'PermissionRequest',
        decision: { behavior: 'deny', message: reason(/Codex takes no rewritten input at PermissionRequest/) },
      },
    },
  },
  // PostToolUse
  {
    name: 'PostToolUse deny → block, context kept',
    input: tool('PostToolUse', 'shell', { command: 'cat .env' }, { tool_response: 'API_KEY=leak' }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'block', reason: reason(/denied by output-check/) },
  },
  {
    name: 'PostToolUse additionalContext',
    input: tool('PostToolUse', 'shell', { command: 'ls' }, { tool_response: 'a b' }),
    exit: 0,
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'checked shell output' } },
  },
  // UserPromptSubmit
  {
    name: 'UserPromptSubmit deny → block',
    input: event('UserPromptSubmit', { prompt: 'my secret is 42' }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'block', reason: reason(/denied by prompt-guard/) },
  },
  {
    name: 'UserPromptSubmit ask → block saying confirmation was required',
    input: event('UserPromptSubmit', { prompt: 'please confirm' }),
    exit: 0,
    decision: 'ask',
    json: {
      decision: 'block',
      reason: reason(
        /denied: prompt-guard requires confirmation \(a human must confirm this prompt\), and Codex cannot ask at UserPromptSubmit/,
      ),
    },
  },
  {
    name: 'UserPromptSubmit rewrite → block',
    input: event('UserPromptSubmit', { prompt: 'redact this' }),
    exit: 0,
    decision: 'none',
    json: { decision: 'block', reason: reason(/Codex cannot take a rewritten prompt/) },
  },
  {
    name: 'UserPromptSubmit additionalContext',
    input: event('UserPromptSubmit', { prompt: 'fix the bug' }),
    exit: 0,
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'project rules: be careful' } },
  },
  // Stop, SubagentStop
  {
    name: 'Stop deny → block, context in the reason',
    input: event('Stop', { stop_hook_active: false, last_assistant_message: 'done, but unfinished' }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'block', reason: reason(/the tests are not green yet \(hookledger explain \d+\)\n\nrun npm test$/) },
  },
  {
    name: 'Stop no opinion',
    input: event('Stop', { stop_hook_active: false, last_assistant_message: 'all done' }),
    exit: 0,
    decision: 'none',
    json: null,
  },
  {
    name: 'SubagentStop deny → block',
    input: event('SubagentStop', { agent_id: 'a1', agent_type: 'worker', last_assistant_message: 'unfinished' }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'block', reason: reason(/keep-going.*\n\nrun npm test$/) },
  },
  // Lifecycle events
  {
    name: 'SessionStart additionalContext',
    input: event('SessionStart', { source: 'startup' }),
    exit: 0,
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'this project uses pnpm' } },
  },
  { name: 'SessionEnd', input: event('SessionEnd'), exit: 0, decision: 'none', json: null },
  {
    name: 'PreCompact deny is recorded only',
    input: event('PreCompact', { trigger: 'deny-me' }),
    exit: 0,
    decision: 'deny',
    json: null,
    stderr: /Codex cannot block PreCompact; recorded only/,
  },
  { name: 'PostCompact', input: event('PostCompact', { trigger: 'auto' }), exit: 0, decision: 'none', json: null },
  { name: 'SubagentStart', input: event('SubagentStart', { agent_id: 'a1', agent_type: 'worker' }), exit: 0, decision: 'none', json: null },
  { name: 'Interrupt', input: event('Interrupt'), exit: 0, decision: 'none', json: null },
  // Undecidable input → the error policy (deny: exit 2 + stderr)
  {
    name: 'unknown event → recorded, exit 2',
    input: event('BeforeEverything', { tool_name: 'shell' }),
    exit: 2,
    decision: 'none',
    json: null,
    stderr: /^hookledger could not decide: unknown Codex event "BeforeEverything" \(recorded as hookledger explain \d+\)\n$/,
  },
  { name: 'no event name → exit 2', input: { session_id: 'x', tool_name: 'shell' }, exit: 2, json: null, stderr: /no hook_event_name/ },
  {
    name: 'garbage → exit 2',
    viaCli: true,
    input: 'rm -rf / }{',
    exit: 2,
    json: null,
    stderr: /^hookledger could not decide: stdin: not valid JSON/,
  },
  { name: 'empty stdin → exit 2', input: '', exit: 2, json: null, stderr: /stdin: empty; expected the Codex hook JSON/ },
  { name: 'a JSON array → exit 2', input: '[1,2]', exit: 2, json: null, stderr: /expected a JSON object/ },
  {
    name: 'a mistyped field on PreToolUse → exit 2',
    input: { ...tool('PreToolUse', 'shell', {}), tool_name: 7 },
    exit: 2,
    json: null,
    stderr: /tool_name must be a string/,
  },
  {
    name: 'a mistyped field on SessionStart → proceeds',
    input: event('SessionStart', { source: 5 }),
    exit: 0,
    json: null,
    stderr: /source must be a string/,
  },
  {
    name: '--on-error allow: garbage proceeds',
    input: 'garbage',
    exit: 0,
    json: null,
    stderr: /HOOKLEDGER_ON_ERROR=allow: proceeding/,
    args: ['--on-error', 'allow'],
  },
];

describe('hookledger codex: the wire table through the real CLI', { timeout: 300_000 }, () => {
  it('answers every case in exactly Codex’s protocol and records it as agent codex', async () => {
    const db = join(tempDir(), 'ledger.db');
    const results = await runWireCases('codex', CASES, db);
    const ledger = openLedger({ path: db });
    try {
      for (const c of CASES) {
        const r = results.get(c.name)!;
        const label = `${c.name}: ${r.stdout}${r.stderr}`;
        expect.soft(r.code, label).toBe(c.exit);
        expect.soft(codexProblems(typeof c.input === 'object' ? String(c.input.hook_event_name) : '', r.stdout, r.code), label).toEqual([]);
        if (c.json === null) expect.soft(r.stdout, label).toBe('');
        else expect.soft(JSON.parse(r.stdout), label).toEqual(c.json);
        if (c.stderr) expect.soft(r.stderr, label).toMatch(c.stderr);
        if (c.exit === 0 && c.stderr === undefined && !/recorded only/.test(r.stderr)) expect.soft(r.stderr, label).toBe('');
        if (c.decision !== undefined && typeof c.input === 'object') {
          const id = Number(/explain (\d+)/.exec(r.stdout + r.stderr)?.[1] ?? NaN);
          const rows = ledger.sqlite
            .prepare('SELECT decision, agent, event_name, tool_name, point FROM invocations WHERE raw_json = ? OR id = ?')
            .all(JSON.stringify(c.input), id) as { decision: string; agent: string; event_name: string; tool_name: string | null }[];
          expect(rows.length, label).toBeGreaterThan(0);
          expect.soft(rows[0], label).toMatchObject({ decision: c.decision, agent: 'codex', event_name: c.input.hook_event_name });
        }
      }
    } finally {
      ledger.close();
    }
  });
});
