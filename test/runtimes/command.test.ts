import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { withModifiedInput } from '../../src/domain/invocation.js';
import { parseHookResult } from '../../src/domain/results.js';
import { commandRuntime } from '../../src/runtimes/command.js';
import { inProcessRuntime } from '../../src/runtimes/in-process.js';
import { runtimeFor } from '../../src/runtimes/index.js';
import { HookExecutionFailure } from '../../src/runtimes/types.js';
import { eventually, fixture, groupGone, makeContext, makeHook, makeInvocation, processGone, rejectionOf } from './helpers.js';

const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'hookledger-command-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// The runtime reads CLAUDE_PROJECT_DIR from our own environment; a test run started inside
// Claude Code has it set, so every test starts without it and sets it where it matters.
const inheritedProjectDir = process.env.CLAUDE_PROJECT_DIR;
beforeEach(() => {
  delete process.env.CLAUDE_PROJECT_DIR;
});
afterEach(() => {
  if (inheritedProjectDir === undefined) delete process.env.CLAUDE_PROJECT_DIR;
  else process.env.CLAUDE_PROJECT_DIR = inheritedProjectDir;
});

type CommandSpec = string | { command: string; args?: string[]; env?: Record<string, string>; cwd?: string };

/** Runs one command hook against an invocation, as the runner would. */
function run(command: CommandSpec, invocation = makeInvocation()) {
  const hook = makeHook({ command });
  const { ctx, controller } = makeContext(hook);
  return { promise: commandRuntime.execute(hook, invocation, ctx), controller };
}

async function answer(command: CommandSpec, invocation = makeInvocation()): Promise<unknown> {
  const result = await run(command, invocation).promise;
  const parsed = parseHookResult(result);
  expect(parsed.ok, JSON.stringify(parsed)).toBe(true);
  return result;
}

async function failure(command: CommandSpec, invocation = makeInvocation()): Promise<HookExecutionFailure> {
  const error = await rejectionOf(run(command, invocation).promise);
  expect(error).toBeInstanceOf(HookExecutionFailure);
  return error as HookExecutionFailure;
}

const sh = (name: string) => `bash ${fixture(name)}`;
const py = (name: string) => `python3 ${fixture(name)}`;

describe('commandRuntime: answers', () => {
  it('exit 0 with no output is no opinion', async () => {
    expect(await answer(sh('silent.sh'))).toBeUndefined();
  });

  it('reads a PreToolUse deny from stdout JSON, computed from the modified input', async () => {
    const invocation = withModifiedInput(makeInvocation(), { command: 'rm -rf /' });
    expect(await answer(py('deny-json.py'), invocation)).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'refusing to run: rm -rf /',
    });
  });

  it('reads the legacy {"decision":"block"} form', async () => {
    expect(await answer(sh('block-legacy.sh'))).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'legacy hooks say no',
    });
  });

  it('keeps an allow with updatedInput whole: the decision and the rewrite', async () => {
    expect(await answer(py('update-input.py'))).toEqual({
      decision: 'allow',
      input: { command: 'ls --dry-run' },
      message: 'forced dry run',
    });
  });

  it('exit 2 denies with the stderr reason', async () => {
    expect(await answer(sh('exit2.sh'))).toEqual({
      decision: 'deny',
      reasonCode: 'policy_violation',
      message: 'rm -rf is not allowed here',
    });
  });

  it('continue: false denies at a tool point but lets a Stop happen (a deny there means keep working)', async () => {
    const stopAll = `echo '{"continue": false, "stopReason": "out of budget"}'`;
    expect(await answer(stopAll)).toEqual({ decision: 'deny', reasonCode: 'policy_violation', message: 'out of budget' });
    for (const [point, eventName] of [
      ['stop', 'Stop'],
      ['subagent_stop', 'SubagentStop'],
    ] as const) {
      const stop = makeInvocation({ point, eventName, toolName: null, toolInput: null, toolUseId: null });
      expect(await answer(stopAll, stop)).toEqual({ additionalContext: 'hook "h1" asked Claude to stop (continue: false): out of budget' });
    }
  });

  it('plain text stdout is no opinion at a tool point and context at user_prompt_submit', async () => {
    expect(await answer(sh('plain.sh'))).toBeUndefined();
    const prompt = makeInvocation({
      point: 'user_prompt_submit',
      eventName: 'UserPromptSubmit',
      toolName: null,
      toolInput: null,
      toolUseId: null,
      prompt: 'hi',
    });
    expect(await answer(sh('plain.sh'), prompt)).toEqual({ additionalContext: 'remember: the build uses pnpm' });
  });

  it('runs the exec form without a shell', async () => {
    const result = (await answer({ command: 'python3', args: [fixture('args.py'), 'two words', '$HOME'] })) as {
      additionalContext: string;
    };
    expect(JSON.parse(result.additionalContext)).toEqual(['two words', '$HOME']);
  });

  it('sends the Claude payload on stdin and sets the environment and cwd', async () => {
    const capture = join(tmp, 'capture.json');
    const raw = { session_id: 's-1', hook_event_name: 'PreToolUse', transcript_path: '/tmp/t.jsonl', tool_input: { command: 'ls' } };
    const invocation = withModifiedInput(makeInvocation({ raw, cwd: tmp }), { command: 'ls -la' });
    await answer({ command: 'bash', args: [fixture('capture-stdin.sh')], env: { CAPTURE_FILE: capture } }, invocation);
    const payload = JSON.parse(readFileSync(capture, 'utf8')) as Record<string, unknown>;
    expect(payload).toMatchObject({
      session_id: 's-1',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls -la' },
      tool_use_id: 'toolu_01',
      transcript_path: '/tmp/t.jsonl',
      cwd: tmp,
      hookledger: { invocationId: 42, hookId: 'h1', replay: false, point: 'pre_tool_use' },
    });
    expect(readFileSync(`${capture}.env`, 'utf8').split('\n').slice(0, 3)).toEqual(['h1', tmp, tmp]);
  });

  it('keeps the inherited CLAUDE_PROJECT_DIR when Claude has cd-ed into a subfolder', async () => {
    // A project whose hook lives under .claude/hooks, and a session now working in src/.
    const project = join(tmp, 'project');
    const sub = join(project, 'src');
    mkdirSync(join(project, '.claude', 'hooks'), { recursive: true });
    mkdirSync(sub, { recursive: true });
    const script = join(project, '.claude', 'hooks', 'deny.sh');
    writeFileSync(script, '#!/bin/sh\necho "denied from $CLAUDE_PROJECT_DIR" >&2\nexit 2\n');
    chmodSync(script, 0o755);
    const invocation = makeInvocation({ cwd: sub });
    process.env.CLAUDE_PROJECT_DIR = project;

    const expected = { decision: 'deny', reasonCode: 'policy_violation', message: `denied from ${project}` };
    expect(await answer('"$CLAUDE_PROJECT_DIR"/.claude/hooks/deny.sh', invocation)).toEqual(expected);
    expect(await answer({ command: '${CLAUDE_PROJECT_DIR}/.claude/hooks/deny.sh', args: [] }, invocation)).toEqual(expected);
    expect(await answer({ command: 'sh', args: ['${CLAUDE_PROJECT_DIR}/.claude/hooks/deny.sh'] }, invocation)).toEqual(expected);

    // Outside Claude Code (e.g. `serve` started from a terminal) the payload's cwd stands in.
    delete process.env.CLAUDE_PROJECT_DIR;
    expect(await answer('"$CLAUDE_PROJECT_DIR"/.claude/hooks/deny.sh', makeInvocation({ cwd: project }))).toEqual(expected);
  });

  it('completes when the hook never reads a 1 MB payload', async () => {
    const invocation = makeInvocation({ toolInput: { command: 'x'.repeat(1024 * 1024) } });
    expect(await answer(sh('no-stdin.sh'), invocation)).toBeUndefined();
  });
});

describe('commandRuntime: failures', () => {
  it('exit 1 is execution_failed with the stderr excerpt on one line', async () => {
    const error = await failure(sh('exit1.sh'));
    expect(error.reason).toBe('execution_failed');
    expect(error.detail).toBe('exited with code 1: Traceback: something broke');
  });

  it('a process killed by a signal is execution_failed naming the signal', async () => {
    const error = await failure('echo dying >&2; kill -9 $$');
    expect(error).toMatchObject({ reason: 'execution_failed', detail: 'killed by SIGKILL: dying' });
  });

  it('garbage JSON on stdout is invalid_result', async () => {
    const error = await failure(sh('garbage.sh'));
    expect(error.reason).toBe('invalid_result');
    expect(error.detail).toMatch(/^stdout is not valid JSON: .*; starts with: \{not json$/);
  });

  it('more than 1 MiB of stdout is invalid_result', async () => {
    const error = await failure(py('big-stdout.py'));
    expect(error).toMatchObject({ reason: 'invalid_result', detail: 'stdout exceeded 1 MiB' });
  });

  it('a program that does not exist cannot start (exec form) or exits 127 (shell form)', async () => {
    const exec = await failure({ command: '/nonexistent/hookledger-hook', args: [] });
    expect(exec).toMatchObject({ reason: 'execution_failed', detail: 'could not start "/nonexistent/hookledger-hook": ENOENT' });
    const shell = await failure('/nonexistent/hookledger-hook');
    expect(shell.reason).toBe('execution_failed');
    expect(shell.detail).toMatch(/^exited with code 127: .*not found/);
  });

  it('a configured cwd that does not exist is execution_failed', async () => {
    const error = await failure({ command: 'true', cwd: join(tmp, 'missing') });
    expect(error.detail).toContain('is not a directory');
  });
});

describe('commandRuntime: process lifetime', () => {
  it('on abort, kills the whole process group and rejects promptly', async () => {
    const pidFile = join(tmp, 'hang.pid');
    const { promise, controller } = run({ command: 'python3', args: [fixture('hang.py')], env: { PID_FILE: pidFile } });
    const outcome = promise.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    expect(await eventually(() => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'), 5000)).toBe(true);
    const [pid, pgid, childPid] = readFileSync(pidFile, 'utf8').trim().split(' ').map(Number) as [number, number, number];
    expect(pgid).toBe(pid); // detached: the hook leads its own group

    const abortedAt = Date.now();
    controller.abort();
    const result = await outcome;
    expect(Date.now() - abortedAt).toBeLessThan(1000);
    expect(result).toBeInstanceOf(Error);
    expect(result).not.toBeInstanceOf(HookExecutionFailure);
    expect(await eventually(() => groupGone(pgid))).toBe(true);
    expect(processGone(childPid)).toBe(true);
  });

  it('rejects at once without spawning when already aborted', async () => {
    const hook = makeHook({ command: 'touch should-not-exist' });
    const { ctx, controller } = makeContext(hook);
    controller.abort();
    await expect(commandRuntime.execute(hook, makeInvocation({ cwd: tmp }), ctx)).rejects.toThrow();
    expect(existsSync(join(tmp, 'should-not-exist'))).toBe(false);
  });

  it('kills children the hook left behind once it exits', async () => {
    const pidFile = join(tmp, 'bg.pid');
    const started = Date.now();
    expect(await answer({ command: 'bash', args: [fixture('fork-bg.sh')], env: { PID_FILE: pidFile } })).toBeUndefined();
    // The background sleep held stdout open: we must not have waited for it.
    expect(Date.now() - started).toBeLessThan(2000);
    const childPid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(await eventually(() => processGone(childPid))).toBe(true);
  });
});

describe('runtimeFor', () => {
  it('picks the runtime by kind, and by isolation for in-process hooks', async () => {
    // Out-of-process runtimes are loaded on first use, so runtimeFor hands out one stable
    // front per kind rather than the modules' own objects.
    const command = runtimeFor(makeHook({ command: 'true' }));
    const http = runtimeFor(makeHook({ http: 'http://127.0.0.1:1/' }));
    const worker = runtimeFor(makeHook({ run: () => undefined, isolation: 'worker' }));
    expect(runtimeFor(makeHook({ command: 'false' }))).toBe(command);
    expect(runtimeFor(makeHook({ worker: { module: '/tmp/hook.js' } }))).toBe(worker);
    expect(new Set([command, http, worker, inProcessRuntime]).size).toBe(4);
    expect(runtimeFor(makeHook({ run: () => undefined }))).toBe(inProcessRuntime);
    expect(runtimeFor(makeHook({ run: () => undefined, isolation: 'main' }))).toBe(inProcessRuntime);
    // The lazily loaded front really is the command runtime.
    const hook = makeHook({ command: 'echo "blocked" >&2; exit 2' });
    await expect(command.execute(hook, makeInvocation(), makeContext(hook).ctx)).resolves.toMatchObject({
      decision: 'deny',
      message: 'blocked',
    });
  });
});
