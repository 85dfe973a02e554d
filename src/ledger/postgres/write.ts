import { hostname } from 'node:os';
import type pg from 'pg';
import { LedgerError } from '../../domain/errors.js';
import type { HookSet } from '../../domain/hooks.js';
import type { Invocation } from '../../domain/invocation.js';
import type { Outcome } from '../../domain/outcomes.js';
import type { Point } from '../../domain/points.js';
import {
  INVOCATION_SELECT,
  invocationEntry,
  linkHash,
  OUTCOME_STATUS,
  outcomeEntry,
  rowsText,
  type LinkKind,
  type RawRow,
  type RowEntry,
} from '../integrity.js';
import { Redactor } from '../redact.js';
import { inputPathOf, redactOutcome } from '../stored-form.js';
import {
  invocationRow,
  outcomeParams,
  outcomeValues,
  storedBegin,
  storedFinal,
  type BeginParams,
  type FinalParams,
  type InvocationResult,
  type LedgerWriterOptions,
} from '../write.js';
import { storedValue, storedValues } from './text.js';
import type { WriterLease } from './writer-lease.js';
import { guardWrite, inTransaction } from './transaction.js';

/**
 * The write path on PostgreSQL, as on SQLite (docs/design.md §4): `begin` commits the invocation
 * `running` before any hook runs; `finish` commits its final state, every outcome and the chain
 * link in one transaction before the decision is returned; background outcomes are stored
 * `pending` and completed later, each completion with its own link.
 *
 * Tamper evidence: each writer appends its own chain (`chain.writer_id`, head in `writers`), so
 * writers on different machines never wait for each other; processes sharing a writer id wait
 * only for that writer's head row, held from the link's insert to the commit. The link encoding
 * is ledger/integrity.ts's, unchanged: a record hashes alike on SQLite and PostgreSQL
 * (test/postgres/write.test.ts pins it).
 *
 * Statements on this path are named (prepared once per connection by the server).
 */

const OUTCOME_COLUMNS = `invocation_id, hook_id, point, priority, registration_index, execution_order, mode, capability,
  runtime, status, decision, decisive, reason_code, message, payload_json, modified_input_json, additional_context,
  failure_reason, failure_detail, skip_reason, skipped_by, redactions_json, timeout_ms, started_at, duration_us`;
const OUTCOME_WIDTH = 25;
/** Position of `decisive` in the outcome values (bound as boolean, chained as the 0/1 SQLite stores). */
const DECISIVE = 11;

const INSERT_INVOCATION = {
  name: 'hl_insert_invocation',
  text: `INSERT INTO invocations (hook_set_id, point, event_name, session_id, turn, tool_name, tool_use_id, agent, cwd,
    input_json, invocation_json, raw_json, redactions_json, status, started_at, pid, host, writer_id)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'running', $14, $15, $16, $17) RETURNING id`,
};
// A row recovery marked `interrupted` (its writer's lease lapsed while it ran) is still committed:
// the decision was made and returned.
const UPDATE_INVOCATION = {
  name: 'hl_update_invocation',
  text: `UPDATE invocations SET status = 'completed', decision = $1, decisive_hook_id = $2, reason_code = $3, message = $4,
    modified_input_json = $5, context_json = $6, redactions_json = $7, finished_at = $8, duration_us = $9
    WHERE id = $10 AND status IN ('running', 'interrupted')`,
};
const HEAD = { name: 'hl_writer_head', text: 'SELECT head_seq, head_hash FROM writers WHERE id = $1 FOR UPDATE' };
const APPEND_LINK = {
  name: 'hl_append_link',
  text: `WITH link AS (
      INSERT INTO chain (writer_id, seq, kind, ref_id, prev_hash, hash, at, rows) VALUES ($1, $2, $3, $4, $5, $6, $7, $8))
    UPDATE writers SET head_seq = $2, head_hash = $6, lease_until = greatest(lease_until, $9) WHERE id = $1`,
};
// Only while pending: a completed outcome is covered by its link.
const START_OUTCOME = {
  name: 'hl_start_outcome',
  text: `UPDATE outcomes SET started_at = $1, execution_order = $2 WHERE id = $3 AND status = 'pending'`,
};
const COMPLETE_OUTCOME = {
  name: 'hl_complete_outcome',
  text: `UPDATE outcomes SET status = $2, decision = $3, reason_code = $4, message = $5, payload_json = $6, modified_input_json = $7,
    additional_context = $8, failure_reason = $9, failure_detail = $10, skip_reason = $11, redactions_json = $12,
    started_at = coalesce($13, started_at), duration_us = $14
    WHERE id = $1 AND status = 'pending'
    RETURNING id, ${OUTCOME_COLUMNS.replace('decisive,', 'decisive::int,')}`,
};
const SELECT_HOOK_SET = { name: 'hl_select_hook_set', text: 'SELECT id FROM hook_sets WHERE fingerprint = $1' };
const INSERT_HOOK_SET = {
  name: 'hl_insert_hook_set',
  text: `INSERT INTO hook_sets (fingerprint, name, version, strategy, definition_json, created_at) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (fingerprint) DO NOTHING`,
};
const SELECT_FINGERPRINT = { name: 'hl_select_fingerprint', text: 'SELECT fingerprint FROM hook_sets WHERE id = $1' };

/** One multi-row outcome INSERT per outcome count, named by that count. */
const insertOutcomes = new Map<number, { name: string; text: string }>();
function insertOutcomesStatement(count: number): { name: string; text: string } {
  let statement = insertOutcomes.get(count);
  if (!statement) {
    const rows = Array.from(
      { length: count },
      (_, r) => `(${Array.from({ length: OUTCOME_WIDTH }, (_, c) => `$${r * OUTCOME_WIDTH + c + 1}`).join(', ')})`,
    );
    statement = {
      name: `hl_insert_outcomes_${count}`,
      text: `INSERT INTO outcomes (${OUTCOME_COLUMNS}) VALUES ${rows.join(', ')} RETURNING id`,
    };
    insertOutcomes.set(count, statement);
  }
  return statement;
}

interface OpenInvocation {
  redactor: Redactor;
  point: Point;
  paths: string[];
  row: BeginParams;
}

/** Records one runner's invocations into a PostgreSQL ledger (the `InvocationRecorder` of the runner). */
export class PostgresRecorder {
  private readonly host: string;
  private readonly hookSetIds = new Map<string, number>();
  private readonly fingerprints = new Map<number, string>();
  private readonly redactors = new Map<number, Redactor>();
  private readonly defaultRedactor = new Redactor();
  private readonly open = new Map<number, OpenInvocation>();
  private readonly pendingBackground = new Map<number, Redactor>();
  /** Background starts being recorded, by outcome row id (settled: never rejects). */
  private readonly starting = new Map<number, Promise<void>>();
  private readonly chained: boolean;

  constructor(
    private readonly pool: pg.Pool,
    private readonly lease: WriterLease,
    private readonly location: string,
    options: LedgerWriterOptions = {},
  ) {
    this.host = options.host ?? hostname();
    this.chained = options.chain ?? true;
  }

  /** The ledger id of a hook set, storing it on first use. */
  async hookSetId(hookSet: HookSet): Promise<number> {
    const cached = this.hookSetIds.get(hookSet.fingerprint);
    if (cached !== undefined) return cached;
    const redactor = hookSet.redact ? new Redactor(hookSet.redact) : this.defaultRedactor;
    const id = await this.guard('store the hook set', async () => {
      const found = await this.pool.query<{ id: number }>({ ...SELECT_HOOK_SET, values: [hookSet.fingerprint] });
      if (found.rows[0]) return found.rows[0].id;
      await this.pool.query({
        ...INSERT_HOOK_SET,
        values: storedValues([hookSet.fingerprint, hookSet.name, hookSet.version, hookSet.strategy, hookSet.canonical, Date.now()]),
      });
      return (await this.pool.query<{ id: number }>({ ...SELECT_HOOK_SET, values: [hookSet.fingerprint] })).rows[0]!.id;
    });
    this.hookSetIds.set(hookSet.fingerprint, id);
    this.fingerprints.set(id, hookSet.fingerprint);
    this.redactors.set(id, redactor);
    return id;
  }

  /** Commits the invocation `running` before any hook runs; returns its id. */
  async begin(hookSetId: number, invocation: Invocation, startedAt: number): Promise<number> {
    const redactor = this.redactors.get(hookSetId) ?? this.defaultRedactor;
    const { row: stored, paths } = storedPostgresBegin(redactor, hookSetId, invocation, startedAt, this.host);
    const values = [
      stored.hookSetId,
      stored.point,
      stored.eventName,
      stored.sessionId,
      stored.turn,
      stored.toolName,
      stored.toolUseId,
      stored.agent,
      stored.cwd,
      stored.inputJson,
      stored.invocationJson,
      stored.rawJson,
      stored.redactionsJson,
      stored.startedAt,
      stored.pid,
      stored.host,
      this.lease.writerId,
    ];
    const id = await this.guard('record the invocation', async () => {
      await this.lease.ensure();
      return (await this.pool.query<{ id: number }>({ ...INSERT_INVOCATION, values })).rows[0]!.id;
    });
    this.open.set(id, { redactor, point: invocation.point, paths, row: stored });
    return id;
  }

  /**
   * Commits the final state, every outcome and the chain link in one transaction. Background
   * outcomes are stored `pending`; their row ids come back in the order given.
   */
  async finish(invocationId: number, result: InvocationResult, outcomes: Outcome[], finishedAt: number = Date.now()): Promise<number[]> {
    const open = this.open.get(invocationId);
    this.open.delete(invocationId);
    const redactor = open?.redactor ?? this.defaultRedactor;
    const { final, outcomeRows } = storedPostgresFinal(invocationId, open, redactor, result, outcomes, finishedAt);
    return this.guard('commit the decision', () =>
      this.transaction(async (client) => {
        const updated = await client.query({
          ...UPDATE_INVOCATION,
          values: [
            final.decision,
            final.decisiveHookId,
            final.reasonCode,
            final.message,
            final.modifiedInputJson,
            final.contextJson,
            final.redactionsJson,
            final.finishedAt,
            final.durationUs,
            invocationId,
          ],
        });
        if (updated.rowCount !== 1)
          throw new LedgerError(
            'ledger_write_failed',
            `invocation #${invocationId} is not in ${this.location}; its decision cannot be committed`,
          );
        let ids: number[] = [];
        if (outcomeRows.length > 0) {
          const bound = outcomeRows.flatMap((v) => v.map((value, i) => (i === DECISIVE ? value === 1 : value)));
          ids = (await client.query<{ id: number }>({ ...insertOutcomesStatement(outcomeRows.length), values: bound })).rows.map(
            (r) => r.id,
          );
        }
        if (this.chained) {
          const row = open
            ? invocationRow(open.row, final, await this.fingerprintOf(open.row.hookSetId))
            : await this.readInvocation(client, invocationId);
          await this.appendLink(client, 'invocation', invocationId, invocationLinkEntries(row, outcomeRows, ids), finishedAt);
        }
        const pending: number[] = [];
        outcomes.forEach((outcome, i) => {
          if (outcome.status === 'pending') {
            pending.push(ids[i]!);
            this.pendingBackground.set(ids[i]!, redactor);
          }
        });
        return pending;
      }),
    );
  }

  /** Marks a pending background outcome as started. */
  async startBackground(outcomeRowId: number, startedAt: number, executionOrder: number): Promise<void> {
    const started = this.guard('record a background hook start', () =>
      this.pool.query({ ...START_OUTCOME, values: [startedAt, executionOrder, outcomeRowId] }),
    );
    this.starting.set(
      outcomeRowId,
      started.then(
        () => undefined,
        () => undefined,
      ),
    );
    await started;
  }

  /** Completes a pending background outcome, with its own chain link. */
  async completeBackground(outcomeRowId: number, outcome: Outcome): Promise<void> {
    // The runner does not wait for the start to be recorded before the hook ends. On a pool the two
    // writes travel on different connections: a start landing after the completion would change the
    // row its link covers, so the completion waits for it.
    const starting = this.starting.get(outcomeRowId);
    this.starting.delete(outcomeRowId);
    if (starting) await starting;
    const redactor = this.pendingBackground.get(outcomeRowId) ?? this.defaultRedactor;
    this.pendingBackground.delete(outcomeRowId);
    const r = redactOutcome(redactor, outcome, inputPathOf(outcome.point));
    const p = outcomeParams(0, r.outcome, r.paths);
    const values = storedValues([
      outcomeRowId,
      p.status,
      p.decision,
      p.reason_code,
      p.message,
      p.payload_json,
      p.modified_input_json,
      p.additional_context,
      p.failure_reason,
      p.failure_detail,
      p.skip_reason,
      p.redactions_json,
      p.started_at,
      p.duration_us,
    ]);
    await this.guard('record a background hook outcome', () =>
      this.transaction(async (client) => {
        const row = (await client.query<unknown[]>({ ...COMPLETE_OUTCOME, values, rowMode: 'array' })).rows[0];
        if (!row) return; // already completed or recovered as interrupted
        if (this.chained) await this.appendLink(client, 'background', outcomeRowId, [outcomeEntry(row, false)], Date.now());
      }),
    );
  }

  private appendLink(client: pg.PoolClient, kind: LinkKind, refId: number, entries: RowEntry[], at: number): Promise<void> {
    return appendChainLink(client, this.lease, this.location, kind, refId, entries, at);
  }

  private async readInvocation(client: pg.PoolClient, id: number): Promise<RawRow> {
    const result = await client.query<unknown[]>({ ...READ_INVOCATION, values: [id], rowMode: 'array' });
    return result.rows[0]!;
  }

  private async fingerprintOf(hookSetId: number): Promise<string | null> {
    let fingerprint = this.fingerprints.get(hookSetId);
    if (fingerprint === undefined) {
      fingerprint = (await this.pool.query<{ fingerprint: string }>({ ...SELECT_FINGERPRINT, values: [hookSetId] })).rows[0]?.fingerprint;
      if (fingerprint === undefined) return null;
      this.fingerprints.set(hookSetId, fingerprint);
    }
    return fingerprint;
  }

  private transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return inTransaction(this.pool, work);
  }

  private guard<T>(what: string, write: () => Promise<T>): Promise<T> {
    return guardWrite(this.location, what, write);
  }
}

/**
 * The invocation row `begin` stores on PostgreSQL: `storedBegin`'s, with strings as PostgreSQL
 * stores them (text.ts). Shared with the bulk generator (scripts/generate-ledger-postgres.ts), so
 * a generated record is stored and chained exactly as a live one.
 */
export function storedPostgresBegin(
  redactor: Redactor,
  hookSetId: number,
  invocation: Invocation,
  startedAt: number,
  host: string,
): { row: BeginParams; paths: string[] } {
  const { row, paths } = storedBegin(redactor, hookSetId, invocation, startedAt, host);
  return { row: Object.fromEntries(Object.entries(row).map(([key, value]) => [key, storedValue(value)])) as BeginParams, paths };
}

/**
 * The final state and outcome rows `finish` stores on PostgreSQL: `storedFinal`'s, strings as
 * stored; each outcome row is the chain's encoded row without its id (`decisive` still 0/1, bound
 * as a boolean).
 */
export function storedPostgresFinal(
  invocationId: number,
  open: { point: Point; paths: string[] } | undefined,
  redactor: Redactor,
  result: InvocationResult,
  outcomes: Outcome[],
  finishedAt: number,
): { final: FinalParams; outcomeRows: unknown[][] } {
  const computed = storedFinal(invocationId, open, redactor, result, outcomes, finishedAt);
  const final = Object.fromEntries(Object.entries(computed.final).map(([key, value]) => [key, storedValue(value)])) as FinalParams;
  const outcomeRows = computed.rows.map((r) => storedValues(outcomeValues(outcomeParams(invocationId, r.outcome, r.paths))));
  return { final, outcomeRows };
}

/** Position of `status` in a stored outcome row (without its id). */
const OUTCOME_STATUS_VALUE = OUTCOME_STATUS - 1;

/** What an invocation's link covers: its row (INVOCATION_SELECT's shape) and each outcome row with its id. */
export function invocationLinkEntries(invocation: RawRow, outcomeRows: unknown[][], outcomeIds: number[]): RowEntry[] {
  const entries: RowEntry[] = [invocationEntry(invocation)];
  outcomeRows.forEach((values, i) => entries.push(outcomeEntry([outcomeIds[i]!, ...values], values[OUTCOME_STATUS_VALUE] === 'pending')));
  return entries;
}

/**
 * Appends a link to the lease's writer's chain, inside the caller's transaction: the writer's
 * head row is locked until the commit, so processes sharing a writer id form one chain.
 */
export async function appendChainLink(
  client: pg.PoolClient,
  lease: WriterLease,
  location: string,
  kind: LinkKind,
  refId: number,
  entries: RowEntry[],
  at: number,
): Promise<void> {
  const writer = lease.writerId;
  const head = (await client.query<{ head_seq: number; head_hash: string }>({ ...HEAD, values: [writer] })).rows[0];
  if (!head) throw new LedgerError('ledger_write_failed', `writer ${writer} is not registered in ${location}`);
  const seq = head.head_seq + 1;
  const hash = linkHash(head.head_hash, seq, kind, refId, at, entries);
  await client.query({
    ...APPEND_LINK,
    values: [writer, seq, kind, refId, head.head_hash, hash, at, rowsText(entries), lease.nextExpiry()],
  });
}

/** The invocation row as the chain covers it: integrity.ts's INVOCATION_SELECT in PostgreSQL's parameter style. */
const READ_INVOCATION = { name: 'hl_read_invocation', text: INVOCATION_SELECT.replace('?', '$1') };
