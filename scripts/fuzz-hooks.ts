// The hook set the fuzz script runs malformed input against (in-process, `hookledger claude`
// and `hookledger serve` all load this file). In-process hooks keep 10,000+ inputs quick.
import { defineHooks } from '../src/domain/hooks.js';

export default defineHooks({
  name: 'fuzz',
  version: '1',
  hooks: [
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      run: (inv) => {
        const command = (inv.toolInput as { command?: unknown } | null)?.command;
        return typeof command === 'string' && command.includes('rm -rf')
          ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf' }
          : undefined;
      },
    },
    {
      id: 'prompt-guard',
      point: 'user_prompt_submit',
      capability: 'guardrail',
      run: (inv) => (inv.prompt?.includes('secret') ? { decision: 'deny', message: 'no secrets' } : undefined),
    },
    { id: 'watch', point: ['pre_tool_use', 'post_tool_use', 'stop', 'session_start', 'other'], run: () => undefined },
  ],
});
