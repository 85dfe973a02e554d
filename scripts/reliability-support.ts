/** Shared by the reliability scripts (crash, concurrent-writers, fuzz): workload, child processes, ledger checks. */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineHooks, type HookSet } from '../src/domain/hooks.js';
import type { InvocationInput } from '../src/domain/invocation.js';
import type { SqliteLedger } from '../src/ledger/sqlite-ledger.js';

export const root = join(import.meta.dirname, '..');
/** tsx's loader by absolute URL, so children run TypeScript from any working directory. */
export const tsxLoader = pathToFileURL(join(root, 'node_modules/tsx/dist/loader.mjs')).href;

/** Foreground hooks every workload invocation runs; each must leave a `completed` outcome. */
export const FOREGROUND_HOOKS = 3;

/**
 * A small, realistic hook set: a guardrail that rewrites, a guardrail that allows, an async
 * observer, and a background observer (its outcome goes pending → completed after the commit).
 */
export function workloadHookSet(): HookSet {
  return defineHooks({
    name: 'reliability-workload',
    version: '1',
    hooks: [
      {
        id: 'dry-run',
        point: 'pre_tool_use',
        match: 'Bash',
        capability: 'guardrail',
        priority: 10,
        run: (inv) => {
          const command = String((inv.toolInput as { command?: unknown } | null)?.command ?? '');
          return command.includes('--dry-run')
            ? undefined
            : { decision: 'modify', input: { command: `${command} --dry-run` }, reason: 'dry runs only' };
        },
      },
      { id: 'allow-ls', point: 'pre_tool_use', capability: 'guardrail', priority: 20, run: () => ({ decision: 'allow', message: 'fine' }) },
      {
        id: 'audit',
        point: 'pre_tool_use',
        priority: 30,
        run: async () => new Promise<undefined>((r) => setImmediate(() => r(undefined))),
      },
      {
        id: 'bg-log',
        point: 'pre_tool_use',
        mode: 'background',
        run: async () => new Promise<undefined>((r) => setImmediate(() => r(undefined))),
      },
    ],
  });
}

export function workloadInvocation(writer: number, n: number): InvocationInput {
  return {
    point: 'pre_tool_use',
    sessionId: `s-${writer}`,
    turn: n,
    toolName: 'Bash',
    toolUseId: `toolu_${writer}_${n}`,
    toolInput: { command: `ls -la /tmp/${n}` },
    agent: 'reliability-script',
  };
}

/** Starts `node --import tsx <script> ...args` with piped stdio. */
export function spawnTs(script: string, args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  return spawn(process.execPath, ['--import', tsxLoader, script, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** Calls `onLine` for each complete stdout line of a child. */
export function onLines(child: ChildProcess, onLine: (line: string) => void): void {
  let buffer = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    let at: number;
    while ((at = buffer.indexOf('\n')) >= 0) {
      onLine(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
    }
  });
}

export function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/** What a ledger holds after a run, checked against the workload's shape. */
export interface LedgerCheck {
  invocations: number;
  completed: number;
  interrupted: number;
  running: number;
  /** Completed invocations without exactly FOREGROUND_HOOKS completed foreground outcomes. */
  incomplete: number;
  integrity: string;
}

export function checkLedger(ledger: SqliteLedger): LedgerCheck {
  const s = ledger.sqlite;
  const count = (status: string) => s.prepare('SELECT count(*) FROM invocations WHERE status = ?').pluck().get(status) as number;
  const incomplete = s
    .prepare(
      `SELECT count(*) FROM invocations i WHERE i.status = 'completed' AND (
         SELECT count(*) FROM outcomes o WHERE o.invocation_id = i.id AND o.mode = 'foreground' AND o.status = 'completed') != ?`,
    )
    .pluck()
    .get(FOREGROUND_HOOKS) as number;
  return {
    invocations: s.prepare('SELECT count(*) FROM invocations').pluck().get() as number,
    completed: count('completed'),
    interrupted: count('interrupted'),
    running: count('running'),
    incomplete,
    integrity: String(s.pragma('integrity_check', { simple: true })),
  };
}

export { flag as option, printTable } from './bench-support.js';
