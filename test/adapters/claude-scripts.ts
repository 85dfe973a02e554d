import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SCRIPTS = join(import.meta.dirname, '../fixtures/claude-hooks');

/** A JSON hook set of real shell and Python scripts, one failure mode per tool (and `extraHooks`); returns its path. */
export function writeScriptsConfig(dir: string, extraHooks: Record<string, unknown>[] = []): string {
  const path = join(dir, 'hooks.json');
  const script = (name: string) => `${name.endsWith('.py') ? 'python3' : 'bash'} ${join(SCRIPTS, name)}`;
  writeFileSync(
    path,
    JSON.stringify({
      name: 'claude-scripts',
      version: '1',
      // Generous: twelve processes start at once, and a busy CI machine must not turn a slow start into a fail-closed deny.
      defaults: { timeoutMs: 20_000 },
      hooks: [
        { id: 'block-rm', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail', priority: 10, command: script('block-rm.sh') },
        {
          id: 'dry-publish',
          point: ['pre_tool_use', 'permission_request'],
          match: 'Bash',
          capability: 'guardrail',
          priority: 20,
          command: script('rewrite.py'),
        },
        { id: 'deny-fetch', point: 'pre_tool_use', match: 'WebFetch', capability: 'guardrail', command: script('deny-fetch.py') },
        { id: 'crash', point: 'pre_tool_use', match: 'Read', capability: 'guardrail', command: script('crash.sh') },
        {
          id: 'hang',
          point: 'pre_tool_use',
          match: 'mcp__github__.*',
          capability: 'guardrail',
          timeoutMs: 300,
          command: script('hang.py'),
        },
        {
          id: 'garbage',
          point: 'pre_tool_use',
          match: 'Write',
          capability: 'guardrail',
          onFailure: 'allow',
          command: script('garbage.sh'),
        },
        { id: 'context', point: 'post_tool_use', command: script('context.py') },
        { id: 'record', point: 'post_tool_use', mode: 'background', command: script('record.sh') },
        ...extraHooks,
      ],
    }),
  );
  return path;
}
