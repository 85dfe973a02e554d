import { defineHooks, type HookDefinition, type HookSet } from '../../src/domain/hooks.js';
import type { InvocationInput } from '../../src/domain/invocation.js';
import { ask, deny } from '../../src/domain/results.js';
import type { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { createRunner } from '../../src/runner/runner.js';
import { sleepUnlessAborted } from '../helpers.js';

const command = (inv: { toolInput: unknown }) => String((inv.toolInput as { command?: string } | null)?.command ?? '');
const filePath = (inv: { toolInput: unknown }) => String((inv.toolInput as { file_path?: string } | null)?.file_path ?? '');

/** The hook set that made the recording. */
export const v1Hooks: HookDefinition[] = [
  {
    id: 'no-rm-rf',
    point: 'pre_tool_use',
    match: 'Bash',
    capability: 'guardrail',
    priority: 10,
    run: (inv) => (command(inv).includes('rm -rf') ? deny('rm -rf is not allowed', 'safety_violation') : undefined),
  },
  {
    id: 'no-root',
    point: 'pre_tool_use',
    match: 'Bash',
    capability: 'guardrail',
    priority: 50,
    run: (inv) => (/\s\/(\s|$)/.test(command(inv)) ? deny('touches /', 'policy_violation') : undefined),
  },
  {
    id: 'no-env',
    point: 'pre_tool_use',
    match: 'Read',
    capability: 'guardrail',
    priority: 20,
    run: (inv) => (filePath(inv).includes('.env') ? deny('secrets stay secret', 'policy_violation') : undefined),
  },
  {
    id: 'confirm-force-push',
    point: 'pre_tool_use',
    match: 'Bash',
    capability: 'guardrail',
    priority: 30,
    run: (inv) => (command(inv).includes('push --force') ? ask('force push: are you sure?') : undefined),
  },
  { id: 'audit', point: ['pre_tool_use', 'user_prompt_submit'], run: () => undefined },
  { id: 'metrics', point: 'pre_tool_use', mode: 'background', run: () => undefined },
];

export const v1 = (): HookSet => defineHooks({ name: 'guardrails', version: '1', hooks: v1Hooks });

/** Replaces hooks of v1 by id (and appends those not in v1). */
export function variant(version: string, replace: HookDefinition[], remove: string[] = []): HookSet {
  const byId = new Map(replace.map((h) => [h.id, h]));
  const hooks = v1Hooks.filter((h) => !remove.includes(h.id)).map((h) => byId.get(h.id) ?? h);
  for (const h of replace) if (!v1Hooks.some((v) => v.id === h.id)) hooks.push(h);
  return defineHooks({ name: 'guardrails', version, hooks });
}

export const bashCall = (cmd: string, sessionId = 's-1'): InvocationInput => ({
  point: 'pre_tool_use',
  sessionId,
  toolName: 'Bash',
  toolInput: { command: cmd },
});
export const readCall = (path: string, sessionId = 's-1'): InvocationInput => ({
  point: 'pre_tool_use',
  sessionId,
  toolName: 'Read',
  toolInput: { file_path: path },
});

/** The recorded history, in order. Ids are 1..n. */
export const history: InvocationInput[] = [
  bashCall('ls -la'), // 1 none
  bashCall('rm -rf build'), // 2 deny no-rm-rf
  bashCall('rm -r dist'), // 3 none
  readCall('/app/.env'), // 4 deny no-env
  readCall('/app/README.md'), // 5 none
  bashCall('git push --force origin main'), // 6 ask
  bashCall('rm -rf /'), // 7 deny no-rm-rf (no-root would deny too)
  bashCall('ls /'), // 8 deny no-root
  { point: 'user_prompt_submit', sessionId: 's-2', prompt: 'hello' }, // 9 none
  readCall('/app/.env.production', 's-2'), // 10 deny no-env
  bashCall('rm build/tmp.txt', 's-2'), // 11 none
];

/** Records `history` through the live runner with v1. */
export async function record(ledger: SqliteLedger, hookSet: HookSet = v1(), invocations: InvocationInput[] = history): Promise<void> {
  const runner = createRunner({ hookSet, ledger });
  for (const invocation of invocations) await runner.run(invocation);
  await runner.close();
}

export { sleepUnlessAborted };
