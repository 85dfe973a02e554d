/**
 * The write floor of the serve benchmarks: what serve wrote for its last request (the same
 * invocation row, outcomes and chain link, on a ledger with the same schema, pragmas and
 * checkpointing) written again in the same two durable transactions: the `running` row, then the
 * final state with its outcomes and link. No HTTP, parsing, hooks or redaction. Used in-process by
 * bench-claude.ts (a sequential loop) and per request by the HTTP floor server
 * (bench-http-floor.ts).
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Package from '../src/index.js';
import type * as Checkpoint from '../src/ledger/checkpoint.js';

/** Opens `floorDb` and returns one durable write of serve's last request in `servedDb`; `packageDir` holds the built dist/. */
export async function floorWriter(
  packageDir: string,
  servedDb: string,
  floorDb: string,
): Promise<{ once: () => void; close: () => Promise<void> }> {
  const { SqliteLedger } = (await import(pathToFileURL(join(packageDir, 'dist/index.js')).href)) as typeof Package;
  const served = SqliteLedger.open({ path: servedDb, readonly: true });
  const invocation = served.sqlite.prepare('SELECT * FROM invocations ORDER BY id DESC LIMIT 1').get() as Record<string, unknown>;
  const outcomes = served.sqlite.prepare('SELECT * FROM outcomes WHERE invocation_id = ?').all(invocation.id) as Record<string, unknown>[];
  await served.close();
  const ledger = SqliteLedger.open({ path: floorDb });
  const s = ledger.sqlite;
  // The checkpoint regime serve's writer has (ledger/checkpoint.ts), so that the floor's p99 / p50 is comparable.
  const { checkpointerFor } = (await import(pathToFileURL(join(packageDir, 'dist/ledger/checkpoint.js')).href)) as typeof Checkpoint;
  const checkpointer = checkpointerFor(s, ledger.path);
  s.prepare(
    `INSERT INTO hook_sets (id, fingerprint, name, version, strategy, definition_json, created_at) VALUES (?, 'floor', 'floor', '1', 'deny_wins', '{}', 0)`,
  ).run(invocation.hook_set_id);
  const finalColumns = ['status', 'decision', 'decisive_hook_id', 'reason_code', 'message', 'modified_input_json', 'context_json'];
  finalColumns.push('redactions_json', 'finished_at', 'duration_us');
  const beginColumns = Object.keys(invocation).filter((c) => c !== 'id' && !finalColumns.includes(c));
  const insertInvocation = s.prepare(
    `INSERT INTO invocations (${beginColumns.join(', ')}, status) VALUES (${beginColumns.map(() => '?').join(', ')}, 'running')`,
  );
  const update = s.prepare(`UPDATE invocations SET ${finalColumns.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`);
  const outcomeColumns = Object.keys(outcomes[0]!).filter((c) => c !== 'id');
  const insertOutcome = s.prepare(
    `INSERT INTO outcomes (${outcomeColumns.join(', ')}) VALUES (${outcomeColumns.map(() => '?').join(', ')})`,
  );
  const head = s.prepare('SELECT seq, hash FROM chain ORDER BY seq DESC LIMIT 1').raw();
  const insertLink = s.prepare('INSERT INTO chain (seq, kind, ref_id, prev_hash, hash, at, rows) VALUES (?, ?, ?, ?, ?, ?, ?)');
  const finish = s.transaction((id: number) => {
    const at = Date.now();
    update.run(...finalColumns.map((c) => (c === 'finished_at' ? at : invocation[c])), id);
    const values: unknown[] = [id, ...beginColumns.map((c) => invocation[c]), ...finalColumns.map((c) => invocation[c])];
    const labels = [`i${id}`];
    for (const outcome of outcomes) {
      const row = outcomeColumns.map((c) => (c === 'invocation_id' ? id : outcome[c]));
      labels.push(`o${Number(insertOutcome.run(...row).lastInsertRowid)}`);
      values.push(...row);
    }
    const [seq, prev] = (head.get() as [number, string] | undefined) ?? [0, '0'.repeat(64)];
    const hash = createHash('sha256')
      .update(`${prev}|${JSON.stringify(values)}`)
      .digest('hex');
    insertLink.run(seq + 1, 'invocation', id, prev, hash, at, labels.map((l) => `${l}:00000000`).join(' '));
  });
  const once = () => {
    checkpointer.beforeWrite();
    const id = Number(insertInvocation.run(...beginColumns.map((c) => (c === 'started_at' ? Date.now() : invocation[c]))).lastInsertRowid);
    checkpointer.beforeWrite();
    finish.immediate(id);
    checkpointer.committed();
  };
  return { once, close: async () => ledger.close() };
}
