/**
 * Crash safety (reliability item 1). A child process runs workload invocations in a loop and
 * prints each invocation id once `runner.run` has resolved (the decision is committed by
 * then); the parent SIGKILLs it at random moments, many times, restarting it each time on the
 * same ledger. About one kill in ten lands during start-up (open, migrations, recovery).
 * Afterwards every reported id must be `completed` with all its foreground outcomes, nothing
 * may be left `running` (the next open marks the dead writer's rows `interrupted`), and
 * `PRAGMA integrity_check` must say ok. Run for synchronous=NORMAL and FULL.
 *
 *   npm run crash -- [--kills 200] [--sync normal|full|both] [--max-delay-ms 250] [--seed 1]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SyncMode } from '../src/ledger/open.js';
import { SqliteLedger } from '../src/ledger/sqlite-ledger.js';
import { createRunner } from '../src/runner/runner.js';
import {
  checkLedger,
  exited,
  FOREGROUND_HOOKS,
  onLines,
  option,
  printTable,
  spawnTs,
  workloadHookSet,
  workloadInvocation,
} from './reliability-support.js';
import { seededRandom } from './bench-support.js';

const script = import.meta.filename;

/** Runs invocations until killed, printing `ready <recovered>` once open, then each committed id. */
async function child(): Promise<void> {
  const ledger = SqliteLedger.open({ path: option('db', ''), synchronous: option('sync', 'normal') as SyncMode });
  const runner = createRunner({ hookSet: workloadHookSet(), ledger });
  // stdout is a pipe: on Linux writes to it are synchronous, so a printed id has left the process.
  process.stdout.write(`ready ${ledger.recovered.invocations}\n`);
  for (let n = 0; ; n++) {
    const report = await runner.run(workloadInvocation(process.pid, n));
    process.stdout.write(`${report.invocationId}\n`);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface ModeResult {
  mode: SyncMode;
  kills: number;
  startupKills: number;
  reported: number;
  recovered: number;
  childErrors: string[];
  seconds: number;
  check: ReturnType<typeof checkLedger>;
  lost: number[];
  committedUnreported: number;
}

async function runMode(mode: SyncMode, kills: number, maxDelayMs: number, rand: () => number): Promise<ModeResult> {
  const dir = mkdtempSync(join(tmpdir(), `hookledger-crash-${mode}-`));
  const path = join(dir, 'ledger.db');
  const reported = new Set<number>();
  const childErrors: string[] = [];
  let recovered = 0;
  let startupKills = 0;
  const started = Date.now();
  try {
    for (let k = 0; k < kills; k++) {
      const proc = spawnTs(script, ['--child', '--db', path, '--sync', mode]);
      let stderr = '';
      proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
      let markReady: () => void = () => {};
      const ready = new Promise<void>((resolve) => (markReady = resolve));
      onLines(proc, (line) => {
        if (line.startsWith('ready ')) {
          recovered += Number(line.slice(6));
          markReady();
        } else if (/^\d+$/.test(line)) reported.add(Number(line));
      });
      const closed = new Promise<void>((resolve) => proc.once('close', () => resolve()));
      const died = exited(proc);
      if (rand() < 0.1) {
        startupKills += 1;
        await Promise.race([sleep(rand() * 400), died]);
      } else {
        await Promise.race([ready, died]);
        await Promise.race([sleep(rand() * maxDelayMs), died]);
      }
      proc.kill('SIGKILL');
      const { signal, code } = await died;
      await closed;
      if (signal !== 'SIGKILL') childErrors.push(`child exited by itself (code ${code}): ${stderr.trim().split('\n')[0] ?? ''}`);
      else if (stderr.trim() !== '') childErrors.push(stderr.trim().split('\n')[0]!);
      if ((k + 1) % 25 === 0) process.stderr.write(`  ${mode}: ${k + 1}/${kills} kills, ${reported.size} decisions reported\n`);
    }
    const seconds = (Date.now() - started) / 1000;
    // The next open recovers the last child's in-flight invocation.
    const ledger = SqliteLedger.open({ path });
    try {
      recovered += ledger.recovered.invocations;
      const check = checkLedger(ledger);
      const statusOf = ledger.sqlite.prepare('SELECT status FROM invocations WHERE id = ?').pluck();
      const foregroundDone = ledger.sqlite
        .prepare(`SELECT count(*) FROM outcomes WHERE invocation_id = ? AND mode = 'foreground' AND status = 'completed'`)
        .pluck();
      const lost = [...reported].filter((id) => statusOf.get(id) !== 'completed' || foregroundDone.get(id) !== FOREGROUND_HOOKS);
      const committedUnreported = check.completed - (reported.size - lost.length);
      return { mode, kills, startupKills, reported: reported.size, recovered, childErrors, seconds, check, lost, committedUnreported };
    } finally {
      ledger.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function parent(): Promise<void> {
  const kills = Number(option('kills', '200'));
  const maxDelayMs = Number(option('max-delay-ms', '250'));
  const seed = Number(option('seed', String(Date.now() % 100000)));
  const syncOption = option('sync', 'both');
  const modes: SyncMode[] = syncOption === 'both' ? ['normal', 'full'] : [syncOption as SyncMode];
  const rand = seededRandom(seed);
  console.log(
    `crash safety: ${kills} SIGKILLs per mode, kill 0-${maxDelayMs} ms after the child is ready (10% during start-up), seed ${seed}`,
  );
  const results: ModeResult[] = [];
  for (const mode of modes) results.push(await runMode(mode, kills, maxDelayMs, rand));
  console.log('');
  printTable(
    ['synchronous', 'kills', 'reported', 'in ledger', 'completed', 'interrupted', 'running', 'incomplete', 'lost', 'integrity', 'seconds'],
    results.map((r) => [
      r.mode.toUpperCase(),
      `${r.kills} (${r.startupKills} at start)`,
      r.reported,
      r.check.invocations,
      r.check.completed,
      r.check.interrupted,
      r.check.running,
      r.check.incomplete,
      r.lost.length,
      r.check.integrity,
      r.seconds.toFixed(0),
    ]),
  );
  console.log('');
  for (const r of results) {
    console.log(
      `${r.mode}: ${r.committedUnreported} invocations committed but killed before their id was printed (complete, counted in completed); ` +
        `${r.recovered} marked interrupted by the next open`,
    );
    if (r.lost.length > 0) console.log(`${r.mode}: LOST ${r.lost.slice(0, 20).join(', ')}`);
    if (r.childErrors.length > 0) console.log(`${r.mode}: child errors: ${r.childErrors.length}, first: ${r.childErrors[0]}`);
  }
  const failed = results.some(
    (r) => r.lost.length > 0 || r.check.running > 0 || r.check.incomplete > 0 || r.check.integrity !== 'ok' || r.childErrors.length > 0,
  );
  console.log(failed ? '\nFAIL' : '\nPASS: no reported decision lost, nothing left running, integrity ok');
  process.exitCode = failed ? 1 : 0;
}

if (process.argv.includes('--child')) await child();
else await parent();
