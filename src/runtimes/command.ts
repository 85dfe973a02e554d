import { spawn, type ChildProcess } from 'node:child_process';
import { stat } from 'node:fs';
import type { Invocation } from '../domain/invocation.js';
import { readClaudeHookOutput, toClaudePayload, type ProcessOutput } from './claude-wire.js';
import { readMeerkatHookOutput, toMeerkatPayload } from './meerkat-wire.js';
import { killProcessGroup, trackProcessGroup, untrackProcessGroup } from './process-groups.js';
import { HookExecutionFailure, type HookRuntime } from './types.js';
import { eventCwd, eventEnv } from './event-environment.js';

export { killRunningHookProcesses } from './process-groups.js';

/** stdout beyond this is discarded and the hook fails: a decision never needs a megabyte. */
export const STDOUT_LIMIT_BYTES = 1024 * 1024;
/** stderr is only kept for reasons and failure excerpts. */
export const STDERR_LIMIT_BYTES = 64 * 1024;
/**
 * How long to wait for stdout/stderr to close after the hook process exited and its group
 * was killed. Only a descendant that left the group (setsid) can hold them open that long.
 */
const STREAM_GRACE_MS = 100;
const SHELL = '/bin/sh';

/**
 * Where command hooks run, per process. `agent` (default): the agent runs on this machine, so a
 * hook runs in the payload's `cwd` and `CLAUDE_PROJECT_DIR` falls back to it, as under Claude
 * Code. `central`: a server that many machines call (`serve --central`, the default for a
 * PostgreSQL ledger): a payload's `cwd` names a directory on the caller's machine, and anyone
 * holding a token could otherwise make the server look up and run a relative or
 * `$CLAUDE_PROJECT_DIR` script in a directory of their choosing here. So in central mode the
 * `cwd` is only data (recorded, passed to hooks on stdin); hooks run in `dir` (the hook set's
 * own directory unless configured) and `CLAUDE_PROJECT_DIR` is `dir`.
 */
export type CommandWorkspace = { kind: 'agent' } | { kind: 'central'; dir: string };

let workspace: CommandWorkspace = { kind: 'agent' };

/** Sets where this process's command hooks run (see CommandWorkspace). */
export function setCommandWorkspace(next: CommandWorkspace): void {
  workspace = next;
}

/**
 * Runs a hook as an external process speaking the Claude Code hook protocol: the payload
 * as JSON on stdin, the answer in the exit code, stdout and stderr. Each hook gets its own
 * process group so that the timeout, and the end of the hook, kill everything it started.
 */
export const commandRuntime: HookRuntime = {
  async execute(hook, invocation, ctx) {
    if (hook.runtime.kind !== 'command') throw new Error(`command runtime given a ${hook.runtime.kind} hook`);
    const spec = hook.runtime;
    const central = workspace.kind === 'central' ? workspace.dir : null;
    const projectDir = central ?? projectDirFor(invocation);
    // Claude Code substitutes path placeholders literally in exec form, where no shell would expand them.
    const expand = (value: string) => (projectDir === null ? value : value.replaceAll('${CLAUDE_PROJECT_DIR}', projectDir));
    const [file, args] = spec.args === null ? [SHELL, ['-c', spec.command]] : [expand(spec.command), spec.args.map(expand)];

    const cwd = await chooseCwd(spec.cwd, central === null ? invocation.cwd : null, spec.command, central);
    const env: NodeJS.ProcessEnv = {
      ...eventEnv(),
      ...spec.env,
      HOOKLEDGER_HOOK_ID: hook.id,
      HOOKLEDGER_REPLAY: ctx.replay ? '1' : '0',
      ...(projectDir !== null ? { CLAUDE_PROJECT_DIR: projectDir } : {}),
    };
    const meerkat = spec.protocol === 'meerkat';
    let input: string;
    try {
      input = JSON.stringify(meerkat ? toMeerkatPayload(invocation) : toClaudePayload(invocation, ctx));
    } catch (error) {
      throw new HookExecutionFailure(
        'execution_failed',
        `could not serialise the invocation for "${spec.command}": ${(error as Error).message}`,
      );
    }

    const output = await runProcess({ file, args, cwd, env, input, signal: ctx.signal, label: spec.command });
    // A truncated stdout cannot be trusted as an answer; a crash is still reported as a crash.
    if (output.stdoutOverflowed && (output.exitCode === 0 || output.exitCode === 2)) {
      throw new HookExecutionFailure('invalid_result', 'stdout exceeded 1 MiB');
    }
    return meerkat ? readMeerkatHookOutput(output, hook.id) : readClaudeHookOutput(output, invocation.point, hook.id);
  },
};

/**
 * `CLAUDE_PROJECT_DIR` as Claude Code gives it to hooks: the session's project root, which
 * stays put when Claude `cd`s into a subfolder, so hooks written as
 * `"$CLAUDE_PROJECT_DIR"/.claude/hooks/x.sh` keep resolving. The payload's `cwd` follows
 * those moves, so it is only the fallback for a process not started by Claude Code (e.g.
 * `serve` run from a terminal). An empty value counts as unset.
 */
function projectDirFor(invocation: Invocation): string | null {
  const inherited = eventEnv().CLAUDE_PROJECT_DIR;
  if (inherited !== undefined && inherited !== '') return inherited;
  return invocation.cwd;
}

/**
 * The hook's own cwd when configured (it must exist: a silent fallback would run the hook
 * somewhere its author did not intend), else the agent's cwd when it exists on this machine
 * (a replayed invocation may come from elsewhere; never in central mode, which passes null and
 * its own directory), else ours.
 */
async function chooseCwd(hookCwd: string | null, agentCwd: string | null, label: string, centralDir: string | null): Promise<string> {
  if (hookCwd !== null) {
    if (!(await isDirectory(hookCwd))) {
      throw new HookExecutionFailure('execution_failed', `could not start "${label}": cwd "${hookCwd}" is not a directory`);
    }
    return hookCwd;
  }
  if (centralDir !== null) return centralDir;
  if (agentCwd !== null && (await isDirectory(agentCwd))) return agentCwd;
  return eventCwd();
}

// node:fs's callback form: node:fs/promises would load readline and file-handle streams into
// every process that starts for one event.
function isDirectory(path: string): Promise<boolean> {
  return new Promise((resolve) => stat(path, (error, stats) => resolve(error === null && stats.isDirectory())));
}

interface RunOptions {
  file: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  input: string;
  signal: AbortSignal;
  /** The command as configured, for error messages. */
  label: string;
}

interface RunResult extends ProcessOutput {
  stdoutOverflowed: boolean;
}

/**
 * Spawns the process in its own group, feeds it `input` and collects its capped output.
 * Resolves once it has exited and its streams have closed (or the grace period passed);
 * rejects with the signal's reason as soon as `signal` aborts, after killing the group.
 */
function runProcess(options: RunOptions): Promise<RunResult> {
  const { signal } = options;
  return new Promise<RunResult>((resolve, reject) => {
    if (signal.aborted) {
      reject(abortReason(signal));
      return;
    }
    let child: ChildProcess;
    try {
      child = spawn(options.file, options.args, { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (error) {
      reject(startFailure(options.label, error));
      return;
    }
    const stdin = child.stdin!;
    const stdoutStream = child.stdout!;
    const stderrStream = child.stderr!;
    const stdout = new CappedSink(STDOUT_LIMIT_BYTES);
    const stderr = new CappedSink(STDERR_LIMIT_BYTES);
    let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    let openStreams = 2;
    let graceTimer: NodeJS.Timeout | undefined;
    let settled = false;

    const releaseStreams = () => {
      stdin.destroy();
      stdoutStream.destroy();
      stderrStream.destroy();
    };
    const settle = (action: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      action();
    };
    const finishIfDone = () => {
      if (exit === null || openStreams > 0) return;
      const { code, signal: killedBy } = exit;
      settle(() =>
        resolve({ exitCode: code, signal: killedBy, stdout: stdout.text(), stderr: stderr.text(), stdoutOverflowed: stdout.overflowed }),
      );
    };
    if (child.pid !== undefined) trackProcessGroup(child.pid);
    const onAbort = () => {
      killGroup(child.pid);
      releaseStreams();
      settle(() => reject(abortReason(signal)));
    };
    signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (error) => {
      // Without a pid the process never started (ENOENT, EACCES ...); other errors are followed by 'exit'.
      if (child.pid === undefined) settle(() => reject(startFailure(options.label, error)));
    });
    // A hook that exits without reading stdin makes our write fail with EPIPE; that is its right.
    stdin.on('error', () => {});
    stdoutStream.on('data', (chunk: Buffer) => stdout.push(chunk));
    stderrStream.on('data', (chunk: Buffer) => stderr.push(chunk));
    const onStreamClosed = () => {
      openStreams -= 1;
      finishIfDone();
    };
    stdoutStream.on('close', onStreamClosed);
    stderrStream.on('close', onStreamClosed);
    child.on('exit', (code, killedBy) => {
      exit = { code, signal: killedBy };
      // Whatever the hook forked and left behind in its group must not outlive it.
      killGroup(child.pid);
      if (openStreams > 0) {
        graceTimer = setTimeout(() => {
          releaseStreams();
          openStreams = 0;
          finishIfDone();
        }, STREAM_GRACE_MS);
      }
      finishIfDone();
    });

    stdin.end(options.input);
  });
}

/** Kills the hook's group and drops it from the registry of running hooks. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  killProcessGroup(pid);
  untrackProcessGroup(pid);
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error('command hook aborted');
}

function startFailure(label: string, error: unknown): HookExecutionFailure {
  const err = error as NodeJS.ErrnoException;
  return new HookExecutionFailure('execution_failed', `could not start "${label}": ${err.code ?? err.message}`);
}

/** Collects up to `limit` bytes and keeps draining past it, so a chatty hook never blocks on a full pipe. */
class CappedSink {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  overflowed = false;

  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    const room = this.limit - this.size;
    if (chunk.length > room) {
      this.overflowed = true;
      if (room <= 0) return;
      chunk = chunk.subarray(0, room);
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  /** Decoded once at the end so a multi-byte character split across chunks survives. */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}
