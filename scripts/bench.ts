/**
 * The run path: 5 foreground in-process hooks that allow, persisted, sequential invocations
 * (with what ships: tamper-evidence chain and default redaction), against a baseline that writes the same rows with hand-written prepared statements and no
 * runner logic, measured in the same run (alternating blocks, so machine noise hits both).
 *
 * `npm run bench` builds first: it measures dist/, the code that ships.
 *
 *   npm run bench                          # 3000 invocations each, synchronous=NORMAL
 *   npm run bench -- --n 10000 --sync full
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
// The built package, as users run it: tsx's transform of src/ wraps every closure it creates in
// a naming helper, which costs microseconds per hook on this path and is not what ships.
import { allow, createRunner, defineHooks, openLedger, type Ledger } from '../dist/index.js';
import { flag, printTable, stats } from './bench-support.js';

const N = Number(flag('n', '3000'));
const SYNC = flag('sync', 'normal') as 'normal' | 'full';
const BLOCK = 250;
const dir = mkdtempSync(join(tmpdir(), 'hookledger-bench-'));

const hookSet = defineHooks({
  name: 'bench',
  version: '1',
  hooks: [1, 2, 3, 4, 5].map((i) => ({
    id: `allow-${i}`,
    point: 'pre_tool_use',
    priority: i * 10,
    capability: 'guardrail' as const,
    run: () => allow(),
  })),
});
const invocation = (i: number) => ({
  point: 'pre_tool_use' as const,
  sessionId: 'bench',
  toolName: 'Bash',
  toolUseId: `toolu_${i}`,
  toolInput: { command: `echo ${i}` },
});

function open(name: string): Ledger {
  return openLedger({ path: join(dir, `${name}.db`), synchronous: SYNC });
}

/**
 * The same rows the runner writes, by hand: an insert before the hooks, one transaction after.
 * With `chain`, also the tamper-evidence row the runner appends (head read, sha-256 over the
 * row values, insert), since that is one of the rows written per invocation.
 */
function baseline(ledger: Ledger, chain: boolean) {
  const s = ledger.sqlite;
  s.prepare(
    `INSERT INTO hook_sets (fingerprint, name, version, strategy, definition_json, created_at) VALUES ('b', 'b', '1', 'deny_wins', '{}', 0)`,
  ).run();
  const host = hostname();
  const insertInvocation = s.prepare(
    `INSERT INTO invocations (hook_set_id, point, event_name, session_id, turn, tool_name, tool_use_id, agent, cwd, input_json, invocation_json, raw_json, status, started_at, pid, host)
     VALUES (1, 'pre_tool_use', NULL, ?, NULL, 'Bash', ?, NULL, NULL, ?, ?, NULL, 'running', ?, ?, ?)`,
  );
  const update = s.prepare(
    `UPDATE invocations SET status = 'completed', decision = 'allow', decisive_hook_id = 'allow-1', reason_code = NULL, message = NULL, modified_input_json = NULL, context_json = NULL, finished_at = ?, duration_us = ? WHERE id = ?`,
  );
  const insertOutcome = s.prepare(
    `INSERT INTO outcomes (invocation_id, hook_id, point, priority, registration_index, execution_order, mode, capability, runtime, status, decision, decisive, reason_code, message, payload_json, modified_input_json, additional_context, failure_reason, failure_detail, skip_reason, skipped_by, timeout_ms, started_at, duration_us)
     VALUES (?, ?, 'pre_tool_use', ?, ?, ?, 'foreground', 'guardrail', 'in_process', 'completed', 'allow', ?, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 5000, ?, 1)`,
  );
  const head = s.prepare('SELECT seq, hash FROM chain ORDER BY seq DESC LIMIT 1').raw();
  const insertLink = s.prepare('INSERT INTO chain (seq, kind, ref_id, prev_hash, hash, at, rows) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const finish = s.transaction((id: number, input: string, invocationJson: string) => {
    const at = Date.now();
    update.run(at, 10, id);
    const values: unknown[] = [id, input, invocationJson, at];
    const labels = [`i${id}`];
    for (let h = 0; h < 5; h++) {
      const outcome = [id, `allow-${h + 1}`, (h + 1) * 10, h, h, h === 0 ? 1 : 0, at];
      const outcomeId = Number(insertOutcome.run(...outcome).lastInsertRowid);
      values.push(...outcome);
      labels.push(`o${outcomeId}`);
    }
    if (chain) {
      const [seq, prev] = (head.get() as [number, string] | undefined) ?? [0, '0'.repeat(64)];
      const hash = createHash('sha256')
        .update(`${prev}|${JSON.stringify(values)}`)
        .digest('hex');
      // The runner's `rows` column: each row's label and an 8-digit check.
      insertLink.run(seq + 1, 'invocation', id, prev, hash, at, labels.map((l) => `${l}:00000000`).join(' '));
    }
  });
  return async (i: number) => {
    const inv = invocation(i);
    const input = JSON.stringify(inv.toolInput);
    // The canonical invocation text the runner stores (every field, nulls included), not the input object.
    const invocationJson = JSON.stringify({
      point: inv.point,
      eventName: null,
      sessionId: inv.sessionId,
      turn: null,
      toolName: inv.toolName,
      toolUseId: inv.toolUseId,
      toolInput: inv.toolInput,
      toolResponse: null,
      prompt: null,
      error: null,
      agent: null,
      cwd: null,
      meta: {},
    });
    const id = Number(
      insertInvocation.run(inv.sessionId, inv.toolUseId, input, invocationJson, Date.now(), process.pid, host).lastInsertRowid,
    );
    finish.immediate(id, input, invocationJson);
  };
}

async function main(): Promise<void> {
  const runnerLedger = open('runner');
  const baselineLedger = open('baseline');
  const chainLedger = open('baseline-chain');
  const runner = createRunner({ hookSet, ledger: runnerLedger });
  const cases: Record<string, (i: number) => Promise<unknown>> = {
    'baseline (prepared statements)': baseline(baselineLedger, false),
    'baseline + chain row': baseline(chainLedger, true),
    'hookledger runner.run': (i) => runner.run(invocation(i)),
  };
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
  const wall: Record<string, number> = Object.fromEntries(Object.keys(cases).map((k) => [k, 0]));
  for (const fn of Object.values(cases)) for (let i = 0; i < 200; i++) await fn(-i - 1); // warm-up
  for (let start = 0; start < N; start += BLOCK) {
    for (const [name, fn] of Object.entries(cases)) {
      const t0 = process.hrtime.bigint();
      for (let i = start; i < Math.min(N, start + BLOCK); i++) {
        const t = process.hrtime.bigint();
        await fn(i);
        samples[name]!.push(Number(process.hrtime.bigint() - t) / 1000);
      }
      wall[name]! += Number(process.hrtime.bigint() - t0) / 1e9;
    }
  }
  await runner.close();
  const base = stats(samples['baseline (prepared statements)']!);
  const chained = stats(samples['baseline + chain row']!);
  console.log(
    `run path: ${N} sequential invocations each, 5 foreground in-process hooks that allow, synchronous=${SYNC.toUpperCase()}, WAL; load ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  printTable(
    ['case', 'n', 'p50 µs', 'p99 µs', 'p99 / p50', 'inv/s', 'p50 vs baseline', 'p50 vs baseline+chain'],
    Object.keys(cases).map((name) => {
      const s = stats(samples[name]!);
      return [
        name,
        s.n,
        s.p50.toFixed(1),
        s.p99.toFixed(1),
        (s.p99 / s.p50).toFixed(2),
        Math.round(N / wall[name]!),
        (s.p50 / base.p50).toFixed(2),
        (s.p50 / chained.p50).toFixed(2),
      ];
    }),
  );
  runnerLedger.close();
  baselineLedger.close();
  chainLedger.close();
  rmSync(dir, { recursive: true, force: true });
}

await main();
