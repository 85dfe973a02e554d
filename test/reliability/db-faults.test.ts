import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { LedgerError } from '../../src/domain/errors.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { createRunner } from '../../src/runner/runner.js';
import { tsxLoader } from '../cli-helpers.js';
import { bash, tempDir } from '../helpers.js';
import { eventually, processGone } from '../runtimes/helpers.js';

const root = join(import.meta.dirname, '../..');
const entry = join(root, 'src/cli/bin.ts');
const fixtures = join(root, 'test/fixtures/reliability');
const claudePreToolUse = JSON.stringify({
  session_id: 's-faults',
  transcript_path: '/tmp/t.jsonl',
  cwd: '/tmp',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'ls' },
  tool_use_id: 'toolu_faults',
});

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The real CLI in a child process. `uid` runs it as another user (tests run as root, which
 * ignores file modes); `fileSizeBlocks` caps the size of any file it writes (RLIMIT_FSIZE, in
 * 512-byte blocks), which a write past it meets as EFBIG, like a full disk.
 */
function cli(
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv; uid?: number; fileSizeBlocks?: number } = {},
): Promise<Result> {
  const node = [process.execPath, '--import', tsxLoader, entry, ...args];
  const [file, argv] =
    options.fileSizeBlocks === undefined
      ? [node[0]!, node.slice(1)]
      : ['/bin/sh', ['-c', `ulimit -f ${options.fileSizeBlocks} && exec "$@"`, 'sh', ...node]];
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - t0 });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(options.input ?? '');
  });
}

function writeJson(dir: string, name: string, value: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

interface Seeded {
  dir: string;
  db: string;
  /** A JSON hook set with one command guardrail. */
  config: string;
  /** A small canonical invocation file. */
  invocation: string;
  /** Every row as it stands, read without writing. */
  snapshot: () => { invocations: unknown[]; outcomes: unknown[] };
}

/** A ledger with three decided invocations, and the files the CLI needs next to it. */
async function seeded(): Promise<Seeded> {
  const dir = tempDir('hookledger-faults-');
  const db = join(dir, 'ledger.db');
  const ledger = SqliteLedger.open({ path: db });
  const runner = createRunner({
    ledger,
    hookSet: defineHooks({
      name: 'seed',
      hooks: [{ id: 'seed-guard', point: 'pre_tool_use', capability: 'guardrail', run: () => ({ decision: 'allow' }) }],
    }),
  });
  for (let i = 0; i < 3; i++) await runner.run(bash(`echo ${i}`));
  await runner.close();
  ledger.close();
  return {
    dir,
    db,
    config: writeJson(dir, 'hooks.json', {
      name: 'faults',
      hooks: [{ id: 'g', point: 'pre_tool_use', capability: 'guardrail', command: 'true' }],
    }),
    invocation: writeJson(dir, 'invocation.json', bash('ls')),
    snapshot: () => {
      const l = SqliteLedger.open({ path: db, readonly: true });
      try {
        return {
          invocations: l.sqlite.prepare('SELECT id, status, decision, finished_at FROM invocations ORDER BY id').all(),
          outcomes: l.sqlite.prepare('SELECT id, invocation_id, hook_id, status FROM outcomes ORDER BY id').all(),
        };
      } finally {
        l.close();
      }
    },
  };
}

/** One line on stderr, starting `hookledger: `, and no stack trace. */
function oneLedgerLine(result: Result, pattern: RegExp): void {
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^hookledger: /);
  expect(lines[0]).toMatch(pattern);
  expect(result.stderr).not.toMatch(/\n\s+at /);
}

/** Claude Code's PreToolUse answer when hookledger cannot decide: the default policy denies, with the reason. */
function claudeDenied(result: Result, pattern: RegExp): void {
  expect(result.code).toBe(0);
  const answer = JSON.parse(result.stdout) as { hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
  expect(answer.hookSpecificOutput.permissionDecision).toBe('deny');
  expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(/^hookledger could not decide: /);
  expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(pattern);
}

function integrity(db: string): unknown {
  const l = SqliteLedger.open({ path: db, readonly: true });
  try {
    return l.sqlite.pragma('integrity_check', { simple: true });
  } finally {
    l.close();
  }
}

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

describe('a read-only ledger', () => {
  it(`fails with one clear line (exit 3), Claude Code gets the deny, nothing changes${asRoot ? ' (run as uid 65534: root ignores file modes)' : ''}`, async () => {
    const s = await seeded();
    const before = s.snapshot();
    chmodSync(s.db, 0o444);
    // The directory stays writable so SQLite can open the WAL index; only the file is read-only.
    chmodSync(s.dir, 0o777);
    const uid = asRoot ? NOBODY : undefined;
    const [run, claude] = await Promise.all([
      cli(['run', s.invocation, '--config', s.config, '--db', s.db], uid !== undefined ? { uid } : {}),
      cli(['claude', '--config', s.config, '--db', s.db], { input: claudePreToolUse, ...(uid !== undefined ? { uid } : {}) }),
    ]);
    expect(run.code).toBe(3);
    oneLedgerLine(run, /could not store the hook set in .*ledger\.db: the database is read-only/);
    claudeDenied(claude, /read-only/);
    expect(s.snapshot()).toEqual(before);
  });

  it('the library refuses writes on a ledger opened read-only, with a LedgerError', async () => {
    const s = await seeded();
    const ledger = SqliteLedger.open({ path: s.db, readonly: true });
    try {
      const hookSet = defineHooks({ name: 'other', hooks: [{ id: 'x', point: 'stop', run: () => undefined }] });
      expect(() => createRunner({ hookSet, ledger })).toThrow(LedgerError);
      expect(() => createRunner({ hookSet, ledger })).toThrow(/read-only/);
    } finally {
      ledger.close();
    }
  });
});

describe('a missing directory', () => {
  it('fails with one clear line naming it (exit 3), and is not created', async () => {
    const dir = tempDir();
    const s = await seeded();
    const db = join(dir, 'nope', 'deeper', 'ledger.db');
    const [run, claude] = await Promise.all([
      cli(['run', s.invocation, '--config', s.config, '--db', db]),
      cli(['claude', '--config', s.config, '--db', db], { input: claudePreToolUse }),
    ]);
    expect(run.code).toBe(3);
    oneLedgerLine(run, /cannot open ledger .*ledger\.db: directory .*deeper does not exist/);
    claudeDenied(claude, /does not exist/);
    expect(existsSync(join(dir, 'nope'))).toBe(false);
  });
});

describe('a full disk', () => {
  it('SQLITE_FULL before the invocation is recorded: a LedgerError and nothing written', async () => {
    const s = await seeded();
    const before = s.snapshot();
    const ledger = SqliteLedger.open({ path: s.db });
    try {
      const runner = createRunner({
        ledger,
        hookSet: defineHooks({ name: 'full', hooks: [{ id: 'g', point: 'pre_tool_use', run: () => undefined }] }),
      });
      // The file may not grow by a single page any more.
      ledger.sqlite.pragma(`max_page_count = ${ledger.sqlite.pragma('page_count', { simple: true }) as number}`);
      const error = await runner.run(bash('x'.repeat(200_000))).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LedgerError);
      expect((error as LedgerError).code).toBe('ledger_write_failed');
      expect((error as LedgerError).message).toMatch(/^could not record the invocation in .*: the disk is full/);
      ledger.sqlite.pragma('max_page_count = 1073741823');
      await runner.close();
    } finally {
      ledger.close();
    }
    expect(s.snapshot().invocations).toEqual(before.invocations.concat([]).slice(0, 3));
    expect(s.snapshot().outcomes).toEqual(before.outcomes);
  });

  it('SQLITE_FULL at the commit: the decision is rolled back whole, the invocation stays running, earlier rows intact', async () => {
    const s = await seeded();
    const before = s.snapshot();
    const ledger = SqliteLedger.open({ path: s.db });
    try {
      const hookSet = defineHooks({
        name: 'full-at-commit',
        hooks: [
          {
            id: 'fills-the-disk',
            point: 'pre_tool_use',
            capability: 'guardrail',
            run: () => {
              ledger.sqlite.pragma(`max_page_count = ${ledger.sqlite.pragma('page_count', { simple: true }) as number}`);
              return { decision: 'modify', input: { command: 'y'.repeat(200_000) } };
            },
          },
        ],
      });
      const runner = createRunner({ ledger, hookSet });
      const error = await runner.run(bash('ls')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LedgerError);
      expect((error as LedgerError).message).toMatch(/^could not commit the decision in .*: the disk is full/);
      const rows = ledger.sqlite.prepare('SELECT id, status, decision FROM invocations ORDER BY id').all() as {
        id: number;
        status: string;
        decision: string | null;
      }[];
      expect(rows.slice(0, 3)).toEqual((before.invocations as typeof rows).map(({ id, status, decision }) => ({ id, status, decision })));
      expect(rows[3]).toMatchObject({ status: 'running', decision: null });
      expect(ledger.sqlite.prepare('SELECT count(*) FROM outcomes WHERE invocation_id = ?').pluck().get(rows[3]!.id)).toBe(0);
      ledger.sqlite.pragma('max_page_count = 1073741823');
      await runner.close();
    } finally {
      ledger.close();
    }
    expect(s.snapshot().outcomes).toEqual(before.outcomes);
    expect(integrity(s.db)).toBe('ok');
  });

  it('through the CLI, with a file-size limit: one clear line (exit 3); a failed commit is marked interrupted by the next open', async () => {
    const s = await seeded();
    const before = s.snapshot();
    const big = writeJson(s.dir, 'big.json', bash('x'.repeat(600_000)));
    const bigAnswer = writeJson(s.dir, 'big-answer.json', {
      name: 'big-answer',
      hooks: [
        {
          id: 'rewrites',
          point: 'pre_tool_use',
          capability: 'guardrail',
          command: { command: 'python3', args: [join(fixtures, 'big-update.py')] },
        },
      ],
    });
    // 1024 blocks of 512 bytes: the WAL cannot grow past 512 kB.
    const atBegin = await cli(['run', big, '--config', s.config, '--db', s.db], { fileSizeBlocks: 1024 });
    expect(atBegin.code).toBe(3);
    oneLedgerLine(atBegin, /could not record the invocation in .*: could not write to the disk .*disk may be full/);
    expect(s.snapshot()).toEqual(before);

    const claude = await cli(['claude', '--config', s.config, '--db', s.db], {
      input: JSON.stringify({ ...JSON.parse(claudePreToolUse), tool_input: { command: 'z'.repeat(600_000) } }),
      fileSizeBlocks: 1024,
    });
    claudeDenied(claude, /could not write to the disk/);

    const atCommit = await cli(['run', s.invocation, '--config', bigAnswer, '--db', s.db], { fileSizeBlocks: 1024 });
    expect(atCommit.code).toBe(3);
    oneLedgerLine(atCommit, /could not commit the decision in .*: could not write to the disk/);

    const ledger = SqliteLedger.open({ path: s.db });
    try {
      expect(ledger.recovered.invocations).toBe(1);
      const rows = ledger.sqlite.prepare('SELECT id, status FROM invocations ORDER BY id').all() as { id: number; status: string }[];
      expect(rows.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'interrupted']);
      expect(ledger.sqlite.prepare('SELECT count(*) FROM outcomes WHERE invocation_id = ?').pluck().get(rows[3]!.id)).toBe(0);
      expect(ledger.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      ledger.close();
    }
    expect(s.snapshot().outcomes).toEqual(before.outcomes);
  });
});

describe('a lock held by another process', () => {
  /** Starts hold-lock.mjs and resolves once it holds the write lock. */
  async function holdLock(db: string, holdMs: number): Promise<number> {
    const locker = spawn(process.execPath, [join(fixtures, 'hold-lock.mjs'), db, String(holdMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      locker.stdout.once('data', () => resolve());
      locker.once('exit', (code) => reject(new Error(`locker exited ${code}`)));
    });
    return locker.pid!;
  }

  it('past the busy timeout: one clear line (exit 3), Claude Code gets the deny, nothing written', async () => {
    const s = await seeded();
    const before = s.snapshot();
    const locker = await holdLock(s.db, 15_000);
    try {
      const env = { HOOKLEDGER_BUSY_TIMEOUT_MS: '300' };
      const [run, claude] = await Promise.all([
        cli(['run', s.invocation, '--config', s.config, '--db', s.db], { env }),
        cli(['claude', '--config', s.config, '--db', s.db], { input: claudePreToolUse, env }),
      ]);
      expect(run.code).toBe(3);
      oneLedgerLine(run, /could not store the hook set in .*: the database is locked by another process/);
      claudeDenied(claude, /locked by another process/);
    } finally {
      process.kill(locker, 'SIGKILL');
    }
    expect(await eventually(() => processGone(locker), 2000)).toBe(true);
    expect(s.snapshot()).toEqual(before);
    expect(integrity(s.db)).toBe('ok');
  });

  it('taken while a hook runs: the commit gives up at the busy timeout, the invocation is interrupted on the next open', async () => {
    const s = await seeded();
    const before = s.snapshot();
    const pidFile = join(s.dir, 'locker.pid');
    const run = await cli(['run', s.invocation, '--config', join(fixtures, 'lock-mid-invocation.ts')], {
      env: { HOOKLEDGER_DB: s.db, HOOKLEDGER_BUSY_TIMEOUT_MS: '300', HOLD_MS: '15000', LOCKER_PID_FILE: pidFile },
    });
    const locker = Number(readFileSync(pidFile, 'utf8'));
    try {
      expect(run.code).toBe(3);
      oneLedgerLine(run, /could not commit the decision in .*: the database is locked by another process/);
    } finally {
      process.kill(locker, 'SIGKILL');
    }
    expect(await eventually(() => processGone(locker), 2000)).toBe(true);
    const ledger = SqliteLedger.open({ path: s.db });
    try {
      expect(ledger.recovered.invocations).toBe(1);
      const rows = ledger.sqlite.prepare('SELECT id, status, message FROM invocations ORDER BY id').all() as {
        id: number;
        status: string;
        message: string;
      }[];
      expect(rows.map((r) => r.status)).toEqual(['completed', 'completed', 'completed', 'interrupted']);
      expect(rows[3]!.message).toMatch(/ended before the decision was committed/);
      expect(ledger.sqlite.prepare('SELECT count(*) FROM outcomes WHERE invocation_id = ?').pluck().get(rows[3]!.id)).toBe(0);
      expect(ledger.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      ledger.close();
    }
    expect(s.snapshot().outcomes).toEqual(before.outcomes);
  });
});
