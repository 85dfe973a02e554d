/**
 * An example hook set to copy and adapt.
 *
 *   hookledger run --config examples/hooks.ts < invocation.json
 *   hookledger claude --config examples/hooks.ts        # as a Claude Code command hook
 *
 * In your own project, import from 'hookledger' instead of '../src/index.js'.
 *
 * What each hook shows:
 *   - no-force-push-to-main  a guardrail that denies (in-process, priority 10)
 *   - pin-npm-install        a guardrail that modifies the tool input (priority 20)
 *   - secret-scan            a command hook (any language, Claude Code protocol), fail-closed
 *   - audit-log              a foreground observer; it sees everything and cannot block
 *   - ship-metrics           a background observer; it runs after the decision and never delays it
 *
 * Order: foreground hooks run by (priority, registration order), and each sees the input as
 * modified by the hooks before it. With the default strategy `deny_wins`, the first deny ends
 * the pass and the hooks after it are recorded as skipped.
 */
import { fileURLToPath } from 'node:url';
import { defineHooks, deny, modify, type Invocation } from '../src/index.js';

/** Tool input of a Bash call, or null for other tools. */
function bashCommand(invocation: Invocation): string | null {
  const input = invocation.toolInput as { command?: unknown } | null;
  return invocation.toolName === 'Bash' && typeof input?.command === 'string' ? input.command : null;
}

export default defineHooks({
  name: 'example-guardrails',
  version: '1.0.0',
  // 'deny_wins' (default): deny > ask > allow > no opinion; 'first_decision_wins': the first answer decides.
  strategy: 'deny_wins',
  // Applied to every hook that does not set the field itself.
  defaults: { timeoutMs: 2000 },
  hooks: [
    {
      id: 'no-force-push-to-main',
      description: 'Denies force-pushes to main or master.',
      point: 'pre_tool_use',
      // Letters, digits, _, -, space, | and , make a list of exact tool names (Claude Code's rule);
      // anything else is an unanchored regular expression, e.g. 'mcp__github__.*'.
      match: 'Bash',
      priority: 10,
      // Only guardrails may deny, ask or modify; the default capability is 'observe'.
      capability: 'guardrail',
      run: (invocation) => {
        const command = bashCommand(invocation) ?? '';
        if (/\bgit\s+push\b.*\s(--force|-f)(?![-\w]).*\b(main|master)\b/.test(command)) {
          return deny('Force-pushing to main/master is not allowed; open a pull request instead.', 'policy_violation', { command });
        }
        return undefined; // no opinion: the next hook decides
      },
    },
    {
      id: 'pin-npm-install',
      description: 'Rewrites `npm install` to `npm ci` so the lockfile is respected.',
      point: 'pre_tool_use',
      match: 'Bash',
      priority: 20,
      capability: 'guardrail',
      run: (invocation) => {
        const command = bashCommand(invocation);
        if (command === null || !/^\s*npm (install|i)\s*$/.test(command)) return undefined;
        // modify replaces the whole tool input; keep the fields you do not change.
        return modify({ ...(invocation.toolInput as object), command: 'npm ci' }, 'use the lockfile');
      },
    },
    {
      id: 'secret-scan',
      description: 'Python script: denies writes containing AWS keys, private keys or passwords.',
      point: 'pre_tool_use',
      match: 'Write|Edit',
      priority: 30,
      capability: 'guardrail',
      // Exec form: no shell, the path is resolved relative to this file so any cwd works.
      // The script reads Claude Code JSON on stdin; exit 2 (stderr = reason) or a
      // permissionDecision on stdout decides; any other exit is a failure.
      command: { command: 'python3', args: [fileURLToPath(new URL('./demo/hooks/secret_scan.py', import.meta.url))] },
      timeoutMs: 5000,
      // A crash or a timeout blocks the write (fail closed). This is the default for guardrails;
      // 'allow' would let it through and record the failure.
      onFailure: 'deny',
    },
    {
      id: 'audit-log',
      description: 'Sees every tool call and result; runs first so a deny never skips it.',
      point: ['pre_tool_use', 'post_tool_use', 'post_tool_use_failure'],
      priority: 0,
      // An observer's deny/ask/modify would be recorded as observe_only_violation, never obeyed.
      capability: 'observe',
      run: () => undefined,
    },
    {
      id: 'ship-metrics',
      description: 'Background observer: would post a metric; never delays the agent.',
      point: ['post_tool_use', 'post_tool_use_failure'],
      mode: 'background',
      timeoutMs: 1000,
      // A failing observer never blocks (onFailure defaults to 'allow' for observers).
      run: async (_invocation, ctx) => {
        if (ctx.replay) return undefined; // replays must not have side effects
        // Stand-in for `await fetch(url, { method: 'POST', body, signal: ctx.signal })`:
        // pass ctx.signal to whatever you await so the hook stops at its timeout.
        await new Promise<void>((done) => {
          const timer = setTimeout(done, 10);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            done();
          });
        });
        return undefined;
      },
    },
  ],
});
