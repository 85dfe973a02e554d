import { defineHooks, type HookSet } from '../../src/domain/hooks.js';
import type { InvocationInput } from '../../src/domain/invocation.js';
import type { Outcome, Report } from '../../src/domain/outcomes.js';
import { deny, modify } from '../../src/domain/results.js';
import type { Ledger } from '../../src/ledger/open.js';
import { createRunner } from '../../src/runner/runner.js';
import { sleepUnlessAborted, tempLedger } from '../helpers.js';

const command = (inv: { toolInput: unknown }) => String((inv.toolInput as { command?: string } | null)?.command ?? '');
const path = (inv: { toolInput: unknown }) => String((inv.toolInput as { file_path?: string } | null)?.file_path ?? '');

/** The guardrails the report tests run real invocations through. */
export function policyHooks(version: string, withNoRm = true): HookSet {
  return defineHooks({
    name: 'policy',
    version,
    hooks: [
      {
        id: 'watch',
        point: ['pre_tool_use', 'post_tool_use', 'user_prompt_submit'],
        priority: 1,
        run: (inv) => (command(inv).includes('watch-me') ? deny('observer objects') : undefined),
      },
      {
        id: 'schema',
        point: 'pre_tool_use',
        capability: 'guardrail',
        priority: 5,
        run: (inv) =>
          (inv.toolInput as { bad?: boolean } | null)?.bad ? deny('input does not match the schema', 'schema_violation') : undefined,
      },
      {
        id: 'rewrite',
        point: 'pre_tool_use',
        match: 'Bash',
        capability: 'guardrail',
        priority: 8,
        run: (inv) =>
          command(inv).startsWith('ls') && !command(inv).includes('-a')
            ? modify({ command: `${command(inv)} -a` }, 'show hidden')
            : undefined,
      },
      ...(withNoRm
        ? [
            {
              id: 'no-rm',
              point: 'pre_tool_use' as const,
              match: 'Bash',
              capability: 'guardrail' as const,
              priority: 10,
              run: (inv: { toolInput: unknown }) =>
                command(inv).includes('rm -rf') ? deny('rm -rf is not allowed', 'safety_violation') : undefined,
            },
          ]
        : []),
      {
        id: 'paths',
        point: 'pre_tool_use',
        match: 'Read|Write',
        capability: 'guardrail',
        priority: 10,
        run: (inv) => (path(inv).startsWith('/etc') ? deny('outside the project', 'policy_violation') : undefined),
      },
      {
        id: 'flaky',
        point: 'pre_tool_use',
        match: 'WebFetch',
        capability: 'guardrail',
        priority: 20,
        timeoutMs: 40,
        run: async (inv, ctx) => {
          const url = String((inv.toolInput as { url?: string }).url);
          if (url.includes('fail')) throw new Error('upstream unavailable');
          if (url.includes('slow')) await sleepUnlessAborted(1000, ctx.signal);
          return undefined;
        },
      },
      {
        id: 'prompt-guard',
        point: 'user_prompt_submit',
        capability: 'guardrail',
        run: (inv) => (String(inv.prompt).includes('secret') ? deny('prompt holds a secret', 'policy_violation') : undefined),
      },
      { id: 'audit', point: ['session_start', 'pre_tool_use', 'post_tool_use'], priority: 300, run: () => undefined },
    ],
  });
}

export interface Recorded {
  report: Report;
  input: InvocationInput;
  hookSet: HookSet;
}

const bash = (sessionId: string, cmd: string): InvocationInput => ({
  point: 'pre_tool_use',
  sessionId,
  toolName: 'Bash',
  toolUseId: `tu-${Math.random().toString(36).slice(2)}`,
  toolInput: { command: cmd },
});
const read = (sessionId: string, file: string): InvocationInput => ({
  point: 'pre_tool_use',
  sessionId,
  toolName: 'Read',
  toolInput: { file_path: file },
});

/** A session's worth of events, deterministic per index, exercising every hook and reason. */
export function sessionEvents(sessionId: string, n: number): InvocationInput[] {
  const events: InvocationInput[] = [{ point: 'session_start', sessionId }];
  const kinds = [
    () => bash(sessionId, 'npm test'),
    () => bash(sessionId, 'rm -rf /'),
    () => read(sessionId, '/etc/passwd'),
    () => read(sessionId, 'src/index.ts'),
    () => ({ point: 'user_prompt_submit', sessionId, prompt: 'here is my secret key' }) as InvocationInput,
    () => ({ point: 'user_prompt_submit', sessionId, prompt: 'fix the test' }) as InvocationInput,
    () => bash(sessionId, 'ls'),
    () => ({ point: 'pre_tool_use', sessionId, toolName: 'Write', toolInput: { file_path: 'a.ts', bad: true } }) as InvocationInput,
    () => ({ point: 'pre_tool_use', sessionId, toolName: 'WebFetch', toolInput: { url: 'https://fail.example' } }) as InvocationInput,
    () => bash(sessionId, 'echo watch-me'),
    () =>
      ({
        point: 'post_tool_use',
        sessionId,
        toolName: 'Bash',
        toolInput: { command: 'npm test' },
        toolResponse: { ok: true },
      }) as InvocationInput,
  ];
  for (let i = 0; i < n; i++) events.push(kinds[i % kinds.length]!());
  return events;
}

/**
 * A real ledger built by running real invocations through the runner: three sessions under
 * hook set policy@1, then one under policy@2 (without no-rm), plus one timeout.
 */
export async function buildLedger(): Promise<{ ledger: Ledger; path: string; recorded: Recorded[]; sets: HookSet[] }> {
  const { ledger, path } = tempLedger();
  const sets = [policyHooks('1'), policyHooks('2', false)];
  const recorded: Recorded[] = [];
  const run = async (hookSet: HookSet, inputs: InvocationInput[]) => {
    const runner = createRunner({ hookSet, ledger });
    for (const input of inputs) recorded.push({ report: await runner.run(input), input, hookSet });
    await runner.close();
  };
  // Interleave sessions so that recorded order differs from session order.
  const s1 = sessionEvents('s-1', 22);
  const s2 = sessionEvents('s-2', 15);
  const s3 = sessionEvents('s-3', 8);
  const mixed: InvocationInput[] = [];
  for (let i = 0; i < Math.max(s1.length, s2.length, s3.length); i++) for (const s of [s1, s2, s3]) if (s[i]) mixed.push(s[i]!);
  await run(sets[0]!, mixed);
  await run(sets[1]!, [
    ...sessionEvents('s-4', 12),
    { point: 'pre_tool_use', sessionId: 's-4', toolName: 'WebFetch', toolInput: { url: 'https://slow.example' } },
  ]);
  return { ledger, path, recorded, sets };
}

/** A stored outcome with every field at its plain default, for tests that write outcomes through `LedgerWriter` directly. */
export function outcome(hookId: string, fields: Partial<Outcome>): Outcome {
  return {
    hookId,
    point: 'pre_tool_use',
    priority: 100,
    registrationIndex: 0,
    executionOrder: 0,
    mode: 'foreground',
    capability: 'guardrail',
    runtime: 'in_process',
    status: 'completed',
    decision: 'none',
    decisive: false,
    reasonCode: null,
    message: null,
    payload: null,
    modifiedInput: null,
    additionalContext: null,
    failureReason: null,
    failureDetail: null,
    skipReason: null,
    skippedBy: null,
    timeoutMs: 5000,
    startedAt: null,
    durationUs: null,
    ...fields,
  };
}
