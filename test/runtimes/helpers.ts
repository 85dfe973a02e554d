import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineHooks, type HookDefinition, type ResolvedHook } from '../../src/domain/hooks.js';
import { invocationSchema, normaliseInvocation, type Invocation, type InvocationInput } from '../../src/domain/invocation.js';
import type { RuntimeContext } from '../../src/runtimes/types.js';

/** Absolute path of a test hook script. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`../fixtures/hooks/${name}`, import.meta.url));
}

/** An invocation as the runner would hold it, validated through the real schema. */
export function makeInvocation(input: Partial<InvocationInput> = {}): Invocation {
  return normaliseInvocation(
    invocationSchema.parse({
      point: 'pre_tool_use',
      sessionId: 's-1',
      toolName: 'Bash',
      toolUseId: 'toolu_01',
      toolInput: { command: 'ls' },
      agent: 'claude-code',
      eventName: 'PreToolUse',
      ...input,
    }),
  );
}

/** One resolved hook, built through `defineHooks` like user code would. */
export function makeHook(definition: Omit<HookDefinition, 'id' | 'point'> & Partial<Pick<HookDefinition, 'id' | 'point'>>): ResolvedHook {
  const set = defineHooks({ name: 'test', hooks: [{ id: 'h1', point: 'pre_tool_use', capability: 'guardrail', ...definition }] });
  return set.hooks[0]!;
}

/** A runtime context with its own AbortController. */
export function makeContext(
  hook: ResolvedHook,
  overrides: Partial<RuntimeContext> = {},
): { ctx: RuntimeContext; controller: AbortController } {
  const controller = new AbortController();
  const ctx: RuntimeContext = {
    signal: controller.signal,
    replay: false,
    hookId: hook.id,
    timeoutMs: hook.timeoutMs,
    invocationId: 42,
    ...overrides,
  };
  return { ctx, controller };
}

/** Captures a rejection so its fields can be asserted. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & { reason?: string; detail?: string }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { reason?: string; detail?: string };
  }
  throw new Error('expected the promise to reject');
}

/**
 * Live (non-zombie) processes in a process group. In a container whose PID 1 does not reap
 * orphans, killed grandchildren linger as zombies and `kill(-pgid, 0)` still succeeds, so
 * zombies are not counted as alive.
 */
function liveGroupMembers(pgid: number): number[] {
  const live: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the parenthesised command name: state ppid pgrp ...
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') live.push(Number(entry));
  }
  return live;
}

/** True when no live process is left in the group. */
export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw error;
  }
  return liveGroupMembers(pgid).length === 0;
}

/** True when the process no longer runs (gone, or a zombie nobody reaped). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
    throw error;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

/** Polls `check` until it holds or `ms` elapse. */
export async function eventually(check: () => boolean, ms = 1000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return check();
}
