import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createHookServer } from '../../src/adapters/server.js';
import { POINTS } from '../../src/domain/points.js';
import { allow, deny } from '../../src/domain/results.js';
import { openLedger } from '../../src/ledger/open.js';
import { runCli } from '../cli-helpers.js';
import { concurrentDir, setup } from '../helpers.js';
import { protocolProblems } from './protocol.js';

/**
 * One wire case per Claude Code event (reference/claude-code-hooks.md section 2), through the
 * real `hookledger claude` and a real script that objects to everything (exit 2). Each event
 * must be recorded at its own point with its name, and answered in its own format by its own
 * blocking rules. The expectations are written from the reference, not from the adapter.
 */

const SCRIPT = join(import.meta.dirname, '../fixtures/claude-hooks/deny-every-event.py');
const tool = { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'toolu_1' };

/** How the reference says a block looks for each event; `none` = cannot block, answer `{}`. */
type Form = 'permission_decision' | 'permission_request' | 'top_level' | 'exit_2' | 'decline' | 'path' | 'none';

const EVENTS: [event: string, point: string, payload: Record<string, unknown>, form: Form][] = [
  ['SessionStart', 'session_start', { source: 'startup', model: 'claude-opus' }, 'none'],
  ['Setup', 'setup', { trigger: 'init' }, 'none'],
  [
    'InstructionsLoaded',
    'instructions_loaded',
    { file_path: '/p/CLAUDE.md', memory_type: 'Project', load_reason: 'session_start' },
    'none',
  ],
  ['UserPromptSubmit', 'user_prompt_submit', { prompt: 'hello' }, 'top_level'],
  ['UserPromptExpansion', 'user_prompt_expansion', { expansion_type: 'slash_command', command_name: 'review', prompt: 'x' }, 'top_level'],
  ['MessageDisplay', 'message_display', { turn_id: 't', message_id: 'm', index: 0, final: true, delta: 'hi' }, 'none'],
  ['PreToolUse', 'pre_tool_use', tool, 'permission_decision'],
  ['PermissionRequest', 'permission_request', { tool_name: 'Bash', tool_input: { command: 'ls' } }, 'permission_request'],
  ['PermissionDenied', 'permission_denied', { ...tool, reason: 'classifier' }, 'none'],
  ['PostToolUse', 'post_tool_use', { ...tool, tool_response: { stdout: '' } }, 'top_level'],
  ['PostToolUseFailure', 'post_tool_use_failure', { ...tool, error: 'Exit code 1' }, 'top_level'],
  ['PostToolBatch', 'post_tool_batch', { tool_calls: [{ ...tool, tool_response: 'ok' }] }, 'top_level'],
  ['Notification', 'notification', { message: 'waiting', notification_type: 'idle_prompt' }, 'none'],
  ['SubagentStart', 'subagent_start', { agent_id: 'a1', agent_type: 'reviewer' }, 'none'],
  ['SubagentStop', 'subagent_stop', { stop_hook_active: false, agent_id: 'a1', agent_type: 'reviewer' }, 'top_level'],
  ['TaskCreated', 'task_created', { task_id: 't1', task_subject: 'write tests' }, 'top_level'],
  ['TaskCompleted', 'task_completed', { task_id: 't1', task_subject: 'write tests' }, 'exit_2'],
  ['Stop', 'stop', { stop_hook_active: false, last_assistant_message: 'done' }, 'top_level'],
  ['StopFailure', 'error', { error: 'rate_limit' }, 'none'],
  ['TeammateIdle', 'teammate_idle', { teammate_name: 'r', team_name: 't' }, 'exit_2'],
  ['ConfigChange', 'config_change', { source: 'project_settings', file_path: '/p/.claude/settings.json' }, 'top_level'],
  ['CwdChanged', 'cwd_changed', { old_cwd: '/p', new_cwd: '/p/src' }, 'none'],
  ['DirectoryAdded', 'directory_added', { directory: '/q', source: 'add_dir' }, 'none'],
  ['FileChanged', 'file_changed', { file_path: '/p/.env', event: 'change' }, 'none'],
  ['WorktreeCreate', 'worktree_create', { name: 'feature-x' }, 'path'],
  ['WorktreeRemove', 'worktree_remove', { worktree_path: '/tmp/worktrees/feature-x' }, 'none'],
  ['PreCompact', 'pre_compact', { trigger: 'manual', custom_instructions: '' }, 'top_level'],
  ['PostCompact', 'post_compact', { trigger: 'auto', compact_summary: 's' }, 'none'],
  ['Elicitation', 'elicitation', { mcp_server_name: 'gh', message: 'token?', mode: 'form' }, 'decline'],
  ['ElicitationResult', 'elicitation_result', { mcp_server_name: 'gh', action: 'accept', content: {} }, 'decline'],
  ['SessionEnd', 'session_end', { reason: 'clear' }, 'none'],
];

describe('every Claude Code event through `hookledger claude`', () => {
  it('covers every event of the reference, each at a point of its own', () => {
    expect(EVENTS).toHaveLength(31);
    expect(new Set(EVENTS.map(([, point]) => point)).size).toBe(31);
    for (const [, point] of EVENTS) expect(POINTS).toContain(point);
  });

  it.each(EVENTS)(
    '%s: recorded at %s, answered in its own format',
    async (event, point, fields, form) => {
      const dir = concurrentDir();
      const config = join(dir, 'hooks.json');
      writeFileSync(
        config,
        JSON.stringify({
          name: 'every-event',
          hooks: [
            {
              id: 'object',
              point: POINTS.filter((p) => p !== 'other'),
              capability: 'guardrail',
              timeoutMs: 30_000,
              command: { command: 'python3', args: [SCRIPT] },
            },
          ],
        }),
      );
      const db = join(dir, 'l.db');
      const payload = { session_id: 's-1', cwd: dir, hook_event_name: event, ...fields };
      const result = await runCli(['claude', '--config', config, '--db', db], { input: JSON.stringify(payload), timeoutMs: 60_000 });

      const reason = expect.stringContaining(`by object (policy_violation): no ${event}`);
      if (form === 'path') {
        expect(result).toMatchObject({ code: 0, stdout: '/tmp/worktrees/feature-x\n', stderr: '' });
      } else if (form === 'exit_2') {
        expect(result.code).toBe(2);
        expect(JSON.parse(result.stdout)).toEqual({});
        expect(result.stderr).toEqual(reason);
      } else {
        expect(result.code).toBe(0);
        const answer = JSON.parse(result.stdout);
        expect(protocolProblems(event, answer)).toEqual([]);
        const expected = {
          permission_decision: {
            hookSpecificOutput: { hookEventName: event, permissionDecision: 'deny', permissionDecisionReason: reason },
          },
          permission_request: { hookSpecificOutput: { hookEventName: event, decision: { behavior: 'deny', message: reason } } },
          top_level: { decision: 'block', reason },
          decline: { hookSpecificOutput: { hookEventName: event, action: 'decline' }, systemMessage: reason },
          none: {},
        }[form];
        expect(answer).toEqual(expected);
        // A deny where the event cannot be blocked is recorded and said on stderr, never dropped.
        if (form === 'none') expect(result.stderr).toMatch(new RegExp(`${event} cannot be blocked; recorded only\\n$`));
        else expect(result.stderr).toBe('');
      }

      const ledger = openLedger({ path: db });
      try {
        const row = ledger.sqlite.prepare('SELECT point, event_name, decision FROM invocations').get();
        expect(row).toEqual({ point, event_name: event, decision: form === 'path' ? 'allow' : 'deny' });
      } finally {
        ledger.close();
      }
    },
    90_000,
  );
});

describe('every Claude Code event over http (POST /claude)', () => {
  it('a block stays a block in the http form: exit-2 events become continue: false, never a bare 200 {}', async () => {
    const everywhere = POINTS.filter((p) => p !== 'other');
    const { runner, ledger } = setup([
      {
        id: 'object',
        point: everywhere,
        capability: 'guardrail',
        run: (inv) => (inv.point === 'worktree_create' ? allow('/tmp/worktrees/feature-x') : deny(`no ${inv.eventName}`)),
      },
    ]);
    const token = 'test-token-0123456789abcdef';
    const server = createHookServer({ runner, ledger, token });
    const { url } = await server.listen(0);
    try {
      for (const [event, , fields, form] of EVENTS) {
        const response = await fetch(`${url}/claude`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ session_id: 's', hook_event_name: event, ...fields }),
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as Record<string, unknown>;
        const specific = body.hookSpecificOutput as Record<string, unknown> | undefined;
        const blocked = {
          permission_decision: () => specific?.permissionDecision === 'deny',
          permission_request: () => (specific?.decision as { behavior?: string } | undefined)?.behavior === 'deny',
          top_level: () => body.decision === 'block',
          exit_2: () => body.continue === false && typeof body.stopReason === 'string',
          decline: () => specific?.action === 'decline',
          path: () => specific?.worktreePath === '/tmp/worktrees/feature-x',
          none: () => Object.keys(body).length === 0,
        }[form];
        expect(blocked(), `${event}: ${JSON.stringify(body)}`).toBe(true);
      }
    } finally {
      await server.close({ drainMs: 100 });
    }
  });
});
