import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLedger } from '../../src/ledger/open.js';
import { tempDir } from '../helpers.js';
import { runWireCases, type WireCase } from './agent-wire.js';
import { geminiProblems } from './gemini-protocol.js';

const base = {
  session_id: 'gemini-s1',
  transcript_path: '/home/u/.gemini/tmp/chat.json',
  cwd: '/work/app',
  timestamp: '2026-11-23T19:00:00Z',
};
const tool = (event: string, tool_name: string, tool_input: unknown, extra: Record<string, unknown> = {}) => ({
  ...base,
  hook_event_name: event,
  tool_name,
  tool_input,
  ...extra,
});
const event = (hook_event_name: string, extra: Record<string, unknown> = {}) => ({ ...base, hook_event_name, ...extra });
const explain = expect.stringMatching(/\(hookledger explain \d+\)$/);
const reason = (re: RegExp) => expect.stringMatching(re);

/** Every event Gemini CLI fires, plus what it might send one day, and what it must never get. */
const CASES: WireCase[] = [
  // BeforeTool
  {
    name: 'BeforeTool run_shell_command deny (match "Bash")',
    viaCli: true,
    input: tool('BeforeTool', 'run_shell_command', { command: 'rm -rf /', description: 'clean' }),
    exit: 0,
    decision: 'deny',
    json: {
      decision: 'deny',
      reason: reason(/^\[hookledger\] denied by no-rm \(safety_violation\): rm -rf is not allowed \(hookledger explain \d+\)$/),
    },
  },
  {
    name: 'BeforeTool matched by the agent’s own tool name',
    input: tool('BeforeTool', 'run_shell_command', { command: 'echo own-name' }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: reason(/denied by own-name/) },
  },
  {
    name: 'BeforeTool ask (Gemini asks the user)',
    input: tool('BeforeTool', 'run_shell_command', { command: 'git push' }),
    exit: 0,
    decision: 'ask',
    json: { decision: 'ask', reason: reason(/^\[hookledger\] confirmation asked by confirm-push: pushes need a human/) },
  },
  {
    name: 'BeforeTool allow',
    input: tool('BeforeTool', 'run_shell_command', { command: 'ls -l' }),
    exit: 0,
    decision: 'allow',
    json: { decision: 'allow', reason: reason(/allowed by allow-ls: listing is fine/) },
  },
  {
    name: 'BeforeTool modify → hookSpecificOutput.tool_input',
    input: tool('BeforeTool', 'run_shell_command', { command: 'npm publish', description: 'ship' }),
    exit: 0,
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'BeforeTool', tool_input: { command: 'npm publish --dry-run', description: 'ship' } } },
  },
  {
    name: 'BeforeTool rewrite dropping a key → deny (a merge cannot remove it)',
    input: tool('BeforeTool', 'run_shell_command', { command: 'drop-key', directory: '/' }),
    exit: 0,
    decision: 'none',
    json: {
      decision: 'deny',
      reason: reason(/drop-key rewrote the input, but Gemini CLI merges a rewrite over the original input and cannot remove "directory"/),
    },
  },
  {
    name: 'BeforeTool no opinion',
    input: tool('BeforeTool', 'run_shell_command', { command: 'npm test' }),
    exit: 0,
    decision: 'none',
    json: {},
  },
  {
    name: 'BeforeTool failing hook (fails closed)',
    input: tool('BeforeTool', 'read_file', { absolute_path: '/etc/passwd' }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: reason(/denied by crash \(runtime_error\)/) },
  },
  {
    name: 'BeforeTool timed-out hook (fails closed)',
    input: tool('BeforeTool', 'WebFetch', { url: 'https://example.com' }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: reason(/denied by slow \(timeout\)/) },
  },
  {
    name: 'BeforeTool with unknown payload fields',
    input: tool(
      'BeforeTool',
      'run_shell_command',
      { command: 'rm -rf ~' },
      { mcp_context: null, original_request_name: 'run_shell_command', future: { x: 1 } },
    ),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: explain },
  },
  {
    name: 'BeforeTool MCP tool, no hook matches',
    input: tool('BeforeTool', 'mcp_github_create_issue', { title: 'x' }),
    exit: 0,
    decision: 'none',
    json: {},
  },
  // AfterTool
  {
    name: 'AfterTool deny',
    input: tool(
      'AfterTool',
      'read_file',
      { absolute_path: '.env' },
      { tool_response: { llmContent: 'KEY=leak', returnDisplay: 'KEY=leak', error: null } },
    ),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: reason(/denied by output-check/) },
  },
  {
    name: 'AfterTool additionalContext',
    input: tool('AfterTool', 'read_file', { absolute_path: 'a.ts' }, { tool_response: { llmContent: 'x', returnDisplay: 'x' } }),
    exit: 0,
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'AfterTool', additionalContext: 'checked read_file output' } },
  },
  {
    name: 'AfterTool of a failed tool',
    input: tool(
      'AfterTool',
      'run_shell_command',
      { command: 'false' },
      { tool_response: { llmContent: '', returnDisplay: '', error: 'exit 1' } },
    ),
    exit: 0,
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'AfterTool', additionalContext: 'checked run_shell_command output' } },
  },
  // BeforeAgent, AfterAgent
  {
    name: 'BeforeAgent deny',
    input: event('BeforeAgent', { prompt: 'my secret is 42' }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: reason(/denied by prompt-guard/) },
  },
  {
    name: 'BeforeAgent ask → deny saying confirmation was required',
    input: event('BeforeAgent', { prompt: 'please confirm' }),
    exit: 0,
    decision: 'ask',
    json: {
      decision: 'deny',
      reason: reason(
        /denied: prompt-guard requires confirmation \(a human must confirm this prompt\), and Gemini CLI cannot ask at BeforeAgent/,
      ),
    },
  },
  {
    name: 'BeforeAgent rewrite → deny',
    input: event('BeforeAgent', { prompt: 'redact this' }),
    exit: 0,
    decision: 'none',
    json: { decision: 'deny', reason: reason(/Gemini CLI cannot take a rewritten prompt/) },
  },
  {
    name: 'BeforeAgent additionalContext',
    input: event('BeforeAgent', { prompt: 'fix the bug' }),
    exit: 0,
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'BeforeAgent', additionalContext: 'project rules: be careful' } },
  },
  {
    name: 'AfterAgent deny → retry, context in the reason',
    input: event('AfterAgent', { prompt: 'fix it', prompt_response: 'unfinished', stop_hook_active: false }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: reason(/the tests are not green yet \(hookledger explain \d+\)\n\nrun npm test$/) },
  },
  {
    name: 'AfterAgent no opinion',
    input: event('AfterAgent', { prompt: 'fix it', prompt_response: 'done', stop_hook_active: false }),
    exit: 0,
    decision: 'none',
    json: {},
  },
  // BeforeModel, AfterModel, BeforeToolSelection
  {
    name: 'BeforeModel rewrite → hookSpecificOutput.llm_request',
    input: event('BeforeModel', { llm_request: { model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'rewrite-model' }] } }),
    exit: 0,
    decision: 'none',
    json: {
      hookSpecificOutput: {
        hookEventName: 'BeforeModel',
        llm_request: { model: 'gemini-2.5-pro', messages: [{ role: 'user', content: 'rewrite-model' }], temperature: 0 },
      },
    },
  },
  {
    name: 'BeforeModel deny',
    input: event('BeforeModel', { llm_request: { model: 'forbidden' } }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: reason(/model-guard/) },
  },
  {
    name: 'AfterModel deny',
    input: event('AfterModel', { llm_request: { model: 'm' }, llm_response: { text: 'bad-answer' } }),
    exit: 0,
    decision: 'deny',
    json: { decision: 'deny', reason: reason(/answer-guard/) },
  },
  {
    name: 'BeforeToolSelection',
    input: event('BeforeToolSelection', { llm_request: { model: 'm' } }),
    exit: 0,
    decision: 'none',
    json: {},
  },
  // Lifecycle
  {
    name: 'SessionStart additionalContext',
    input: event('SessionStart', { source: 'startup' }),
    exit: 0,
    decision: 'none',
    json: { hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'this project uses pnpm' } },
  },
  { name: 'SessionEnd', input: event('SessionEnd', { reason: 'exit' }), exit: 0, decision: 'none', json: {} },
  {
    name: 'PreCompress deny is recorded and shown',
    input: event('PreCompress', { trigger: 'deny-me' }),
    exit: 0,
    decision: 'deny',
    json: { systemMessage: explain },
    stderr: /Gemini CLI cannot block PreCompress; recorded only/,
  },
  {
    name: 'Notification',
    input: event('Notification', { notification_type: 'ToolPermission', message: 'needs approval', details: {} }),
    exit: 0,
    decision: 'none',
    json: {},
  },
  // Undecidable input → the error policy (deny: decision deny + exit 2 + stderr)
  {
    name: 'unknown event → recorded, denied, exit 2',
    input: event('BeforeEverything'),
    exit: 2,
    decision: 'none',
    json: {
      decision: 'deny',
      reason: reason(/^hookledger could not decide: unknown Gemini CLI event "BeforeEverything"/),
      systemMessage: expect.any(String),
    },
    stderr: /unknown Gemini CLI event "BeforeEverything"/,
  },
  {
    name: 'garbage → exit 2',
    viaCli: true,
    input: '<html>',
    exit: 2,
    json: { decision: 'deny', reason: reason(/stdin: not valid JSON/), systemMessage: expect.any(String) },
    stderr: /not valid JSON/,
  },
  {
    name: 'empty stdin → exit 2',
    input: '  ',
    exit: 2,
    json: { decision: 'deny', reason: reason(/expected the Gemini CLI hook JSON/), systemMessage: expect.any(String) },
    stderr: /empty/,
  },
  {
    name: 'no event name → exit 2',
    input: { tool_name: 'run_shell_command' },
    exit: 2,
    json: { decision: 'deny', reason: reason(/no hook_event_name/), systemMessage: expect.any(String) },
    stderr: /no hook_event_name/,
  },
  {
    name: 'a mistyped field on BeforeTool → exit 2',
    input: { ...tool('BeforeTool', 'x', {}), tool_name: ['run_shell_command'] },
    exit: 2,
    json: { decision: 'deny', reason: reason(/tool_name must be a string/), systemMessage: expect.any(String) },
    stderr: /tool_name must be a string/,
  },
  {
    name: 'a mistyped field on SessionEnd → proceeds',
    input: event('SessionEnd', { timestamp: 5 }),
    exit: 0,
    json: { systemMessage: reason(/timestamp must be a string/) },
    stderr: /timestamp/,
  },
  {
    name: '--on-error allow: garbage proceeds',
    input: 'nope',
    exit: 0,
    json: { systemMessage: reason(/HOOKLEDGER_ON_ERROR=allow: proceeding/) },
    stderr: /not valid JSON/,
    args: ['--on-error', 'allow'],
  },
];

describe('hookledger gemini: the wire table through the real CLI', { timeout: 300_000 }, () => {
  it('answers every case in exactly Gemini CLI’s protocol and records it as agent gemini-cli', async () => {
    const db = join(tempDir(), 'ledger.db');
    const results = await runWireCases('gemini', CASES, db);
    const ledger = openLedger({ path: db });
    try {
      for (const c of CASES) {
        const r = results.get(c.name)!;
        const label = `${c.name}: ${r.stdout}${r.stderr}`;
        expect.soft(r.code, label).toBe(c.exit);
        const event = typeof c.input === 'object' ? String(c.input.hook_event_name) : '';
        expect.soft(geminiProblems(event, r.stdout, r.code, r.stderr), label).toEqual([]);
        expect.soft(r.stdout.trim().split('\n'), label).toHaveLength(1);
        expect.soft(JSON.parse(r.stdout), label).toEqual(c.json);
        if (c.stderr) expect.soft(r.stderr, label).toMatch(c.stderr);
        else expect.soft(r.stderr, label).toBe('');
        if (c.decision !== undefined && typeof c.input === 'object') {
          const id = Number(/explain (\d+)/.exec(r.stdout + r.stderr)?.[1] ?? NaN);
          const rows = ledger.sqlite
            .prepare('SELECT decision, agent, event_name, point FROM invocations WHERE raw_json = ? OR id = ?')
            .all(JSON.stringify(c.input), id) as { decision: string }[];
          expect.soft(rows.length, label).toBeGreaterThan(0);
          expect.soft(rows[0], label).toMatchObject({ decision: c.decision, agent: 'gemini-cli', event_name: c.input.hook_event_name });
        }
      }
      const failed = ledger.sqlite
        .prepare(`SELECT point FROM invocations WHERE event_name = 'AfterTool' AND raw_json LIKE '%exit 1%'`)
        .get() as {
        point: string;
      };
      expect(failed.point).toBe('post_tool_use_failure');
    } finally {
      ledger.close();
    }
  });
});
