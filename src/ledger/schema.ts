import { sql } from 'drizzle-orm';
import { blob, index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { STRATEGIES } from '../domain/hooks.js';
import { CAPABILITIES, FAILURE_REASONS, INVOCATION_STATUSES, MODES, OUTCOME_STATUSES, RUNTIMES, SKIP_REASONS } from '../domain/outcomes.js';
import { POINTS } from '../domain/points.js';
import { CHANGE_KINDS, REPLAY_RUN_STATUSES } from '../domain/replay.js';
import { DECISIONS, REASON_CODES, RETURNED_DECISIONS } from '../domain/results.js';
import { LINK_KINDS } from './integrity.js';

/**
 * The ledger's tables: the one source of column names and row types (docs/design.md §5).
 * Times are ms since the epoch, durations µs, JSON as text. Columns are snake_case; the read
 * and write paths use raw prepared statements (measured: a query builder rebuilt per call
 * costs more than the indexed reads), so their rows are typed from here as `StoredRow`
 * (ledger/rows.ts): snake_case keys with these columns' types. Enumerated columns name their
 * values (`{ enum }`): SQLite does not check them (no migration), TypeScript does.
 */

/** A hook set, stored once per fingerprint. */
export const hookSets = sqliteTable(
  'hook_sets',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    fingerprint: text('fingerprint').notNull(),
    name: text('name').notNull(),
    version: text('version').notNull(),
    strategy: text('strategy', { enum: STRATEGIES }).notNull(),
    definitionJson: text('definition_json').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('hook_sets_fingerprint').on(t.fingerprint)],
);

/** One event handed to the runner. Written `running` before any hook runs. */
export const invocations = sqliteTable(
  'invocations',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    hookSetId: integer('hook_set_id')
      .notNull()
      .references(() => hookSets.id),
    point: text('point', { enum: POINTS }).notNull(),
    /** The agent's own event name (e.g. `PreToolUse`, or an unknown Claude Code event). */
    eventName: text('event_name'),
    sessionId: text('session_id'),
    turn: integer('turn'),
    toolName: text('tool_name'),
    toolUseId: text('tool_use_id'),
    agent: text('agent'),
    cwd: text('cwd'),
    /** The modifiable input as the agent sent it: tool input, or the prompt at user_prompt_submit. */
    inputJson: text('input_json'),
    /** The canonical invocation without `raw`. */
    invocationJson: text('invocation_json').notNull(),
    /** The agent's own payload, verbatim. */
    rawJson: text('raw_json'),
    /** The input as hooks left it, when any hook modified it. */
    modifiedInputJson: text('modified_input_json'),
    status: text('status', { enum: INVOCATION_STATUSES }).notNull(),
    decision: text('decision', { enum: DECISIONS }),
    decisiveHookId: text('decisive_hook_id'),
    reasonCode: text('reason_code', { enum: REASON_CODES }),
    message: text('message'),
    /** JSON array of strings the hooks supplied as additional context. */
    contextJson: text('context_json'),
    /** JSON list of the field paths redaction replaced before storage. */
    redactionsJson: text('redactions_json'),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
    durationUs: integer('duration_us'),
    /** Writer process, so that a later open can tell a dead process's `running` rows. */
    pid: integer('pid').notNull(),
    host: text('host').notNull(),
  },
  (t) => [
    index('invocations_tool_use_id').on(t.toolUseId),
    index('invocations_session').on(t.sessionId, t.id),
    index('invocations_decision').on(t.decision, t.id),
    index('invocations_started_at').on(t.startedAt),
    index('invocations_running')
      .on(t.status)
      .where(sql`status = 'running'`),
    // Report filters (denials, sessions, export, replay) walk invocations in id order; each
    // filter column has an index ending in id so that a page is a range read, not a sort.
    index('invocations_tool').on(t.toolName, t.id),
    index('invocations_point').on(t.point, t.id),
    index('invocations_hook_set').on(t.hookSetId, t.id),
    index('invocations_decisive_hook')
      .on(t.decisiveHookId, t.id)
      .where(sql`decisive_hook_id IS NOT NULL`),
    index('invocations_reason')
      .on(t.reasonCode, t.id)
      .where(sql`reason_code IS NOT NULL`),
    // Denials are a few percent of invocations: these partial indexes hold only them, so a
    // filtered page of denials reads exactly its rows however rare the filter value is.
    index('invocations_deny_tool')
      .on(t.toolName, t.id)
      .where(sql`decision = 'deny'`),
    index('invocations_deny_point')
      .on(t.point, t.id)
      .where(sql`decision = 'deny'`),
    index('invocations_deny_hook')
      .on(t.decisiveHookId, t.id)
      .where(sql`decision = 'deny'`),
    index('invocations_deny_hook_set')
      .on(t.hookSetId, t.id)
      .where(sql`decision = 'deny'`),
    index('invocations_deny_session')
      .on(t.sessionId, t.id)
      .where(sql`decision = 'deny'`),
    // A time bound on denials becomes an id range read from the denials alone (a few percent of the window).
    index('invocations_deny_started_at')
      .on(t.startedAt, t.id)
      .where(sql`decision = 'deny'`),
  ],
);

/** One hook's record for one invocation. Every matched hook has a row. */
export const outcomes = sqliteTable(
  'outcomes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    invocationId: integer('invocation_id')
      .notNull()
      .references(() => invocations.id, { onDelete: 'cascade' }),
    hookId: text('hook_id').notNull(),
    point: text('point', { enum: POINTS }).notNull(),
    priority: integer('priority').notNull(),
    registrationIndex: integer('registration_index').notNull(),
    executionOrder: integer('execution_order'),
    mode: text('mode', { enum: MODES }).notNull(),
    capability: text('capability', { enum: CAPABILITIES }).notNull(),
    runtime: text('runtime', { enum: RUNTIMES }).notNull(),
    status: text('status', { enum: OUTCOME_STATUSES }).notNull(),
    decision: text('decision', { enum: RETURNED_DECISIONS }),
    decisive: integer('decisive', { mode: 'boolean' }).notNull(),
    reasonCode: text('reason_code', { enum: REASON_CODES }),
    message: text('message'),
    payloadJson: text('payload_json'),
    modifiedInputJson: text('modified_input_json'),
    additionalContext: text('additional_context'),
    failureReason: text('failure_reason', { enum: FAILURE_REASONS }),
    failureDetail: text('failure_detail'),
    skipReason: text('skip_reason', { enum: SKIP_REASONS }),
    skippedBy: text('skipped_by'),
    /** JSON list of the paths (message, payload.token ...) redaction replaced in this outcome before storage. */
    redactionsJson: text('redactions_json'),
    timeoutMs: integer('timeout_ms').notNull(),
    startedAt: integer('started_at'),
    durationUs: integer('duration_us'),
  },
  (t) => [
    index('outcomes_invocation').on(t.invocationId),
    // Hook health reads only this index: ordered by duration within a hook, so a percentile is
    // the k-th entry in the window with no sort; the other columns make it covering.
    index('outcomes_health').on(t.hookId, t.durationUs, t.startedAt, t.status, t.decision, t.failureReason, t.decisive),
    index('outcomes_skipped')
      .on(t.hookId, t.invocationId)
      .where(sql`status = 'skipped'`),
    index('outcomes_pending')
      .on(t.status)
      .where(sql`status = 'pending'`),
  ],
);

/** One replay: which hook set against which selection, and its totals. */
export const replayRuns = sqliteTable('replay_runs', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  hookSetId: integer('hook_set_id')
    .notNull()
    .references(() => hookSets.id),
  baselineHookSetId: integer('baseline_hook_set_id').references(() => hookSets.id),
  filterJson: text('filter_json').notNull(),
  /** running, completed, incomplete (interrupted; results so far kept). */
  status: text('status', { enum: REPLAY_RUN_STATUSES }).notNull(),
  startedAt: integer('started_at').notNull(),
  finishedAt: integer('finished_at'),
  /** JSON object of totals by change kind. */
  totalsJson: text('totals_json').notNull(),
  /** JSON object of how the run was made: concurrency, background hooks run or not, batch size. */
  optionsJson: text('options_json').notNull().default('{}'),
  /** The replaying process, so that a later replay can mark a run whose process died as incomplete. */
  pid: integer('pid'),
  host: text('host'),
});

/** One replayed invocation: old and new decision and what changed. */
export const replayResults = sqliteTable(
  'replay_results',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    runId: integer('run_id')
      .notNull()
      .references(() => replayRuns.id, { onDelete: 'cascade' }),
    invocationId: integer('invocation_id').notNull(),
    /** unchanged, newly_denied, newly_allowed, now_asks, other_hook, other_reason, modified_differently, failed. */
    change: text('change', { enum: CHANGE_KINDS }).notNull(),
    oldDecision: text('old_decision', { enum: DECISIONS }),
    newDecision: text('new_decision', { enum: DECISIONS }),
    oldDecisiveHookId: text('old_decisive_hook_id'),
    newDecisiveHookId: text('new_decisive_hook_id'),
    /** The new report's outcomes and the per-hook diff, as JSON. */
    detailJson: text('detail_json').notNull(),
    baselineMismatch: integer('baseline_mismatch', { mode: 'boolean' }).notNull().default(false),
  },
  (t) => [index('replay_results_run').on(t.runId, t.change)],
);

/**
 * The tamper-evidence chain: one link per committed record, in commit order. Each link's hash
 * covers the previous link's hash and a digest of the record's stored columns, so editing,
 * inserting or deleting a record outside hookledger breaks the chain (see ledger/integrity.ts).
 * `seq` is assigned inside the committing IMMEDIATE transaction: several writer processes
 * produce one chain.
 */
export const chain = sqliteTable(
  'chain',
  {
    seq: integer('seq').primaryKey(),
    /** invocation (an invocation with its outcomes), background (a completed background outcome), checkpoint (a prune). */
    kind: text('kind', { enum: LINK_KINDS }).notNull(),
    /** invocations.id, outcomes.id or prune_checkpoints.id, by kind. */
    refId: integer('ref_id').notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
    at: integer('at').notNull(),
    /** A 32-bit check per row (diagnosis only: lets verify name the row that changed; not trusted). */
    rows: text('rows').notNull(),
  },
  (t) => [uniqueIndex('chain_ref').on(t.kind, t.refId)],
);

/** Sessions that `prune` must keep (legal hold). */
export const legalHolds = sqliteTable('legal_holds', {
  sessionId: text('session_id').primaryKey(),
  reason: text('reason').notNull(),
  heldBy: text('held_by').notNull(),
  createdAt: integer('created_at').notNull(),
});

/** One prune batch: what it removed, so that verify accepts the gaps it left in the chain. */
export const pruneCheckpoints = sqliteTable('prune_checkpoints', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  at: integer('at').notNull(),
  /** The cutoff: invocations started before it (ms) were removed. */
  before: integer('before').notNull(),
  invocations: integer('invocations').notNull(),
  outcomes: integer('outcomes').notNull(),
  /** JSON array of [firstSeq, lastSeq, hashOfLastSeq] for each run of removed chain links. */
  removedJson: text('removed_json').notNull(),
});

/**
 * Hook health, rolled up per hook per closed UTC hour (ledger/health-rollup.ts). Runs count in
 * the hour their outcome started, skips in the hour their invocation started. Built lazily by
 * `hookHealth`, deleted by prune for the hours it touches; never written on the per-event path.
 */
export const healthRollups = sqliteTable(
  'health_rollups',
  {
    /** Start of the hour, ms since the epoch. */
    hour: integer('hour').notNull(),
    hookId: text('hook_id').notNull(),
    runs: integer('runs').notNull(),
    allows: integer('allows').notNull(),
    denials: integer('denials').notNull(),
    asks: integer('asks').notNull(),
    modifies: integer('modifies').notNull(),
    decisive: integer('decisive').notNull(),
    failures: integer('failures').notNull(),
    timeouts: integer('timeouts').notNull(),
    observeOnlyViolations: integer('observe_only_violations').notNull(),
    skips: integer('skips').notNull(),
    interrupted: integer('interrupted').notNull(),
    /** Runs with a duration (the histogram's total). */
    timed: integer('timed').notNull(),
    maxUs: integer('max_us'),
    /** Duration histogram: varint pairs (bucket delta, count), buckets 2^(1/32) wide (health-rollup.ts). */
    histogram: blob('histogram', { mode: 'buffer' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.hour, t.hookId] })],
);

/** The hours rolled up (an hour without any outcome has no `health_rollups` row but is still built). */
export const healthRollupHours = sqliteTable('health_rollup_hours', {
  hour: integer('hour').primaryKey(),
  builtAt: integer('built_at').notNull(),
});

/** One row: the highest invocation id the rollup has seen, to notice invocations recorded later with an older start. */
export const healthRollupState = sqliteTable('health_rollup_state', {
  id: integer('id').primaryKey(),
  lastInvocationId: integer('last_invocation_id').notNull(),
});

/**
 * Each session's totals over all its invocations, kept current as records commit by triggers
 * (migration 0005, docs/reports.md "Sessions summary"), so that the sessions list a console
 * opens first reads 50 rows instead of aggregating 50 sessions. A cache: `stale` rows (a
 * prune or an edit removed or moved something of the session) are recomputed before a list
 * reads them.
 */
export const sessionSummaries = sqliteTable(
  'session_summaries',
  {
    sessionId: text('session_id').primaryKey(),
    firstSeen: integer('first_seen').notNull(),
    lastSeen: integer('last_seen').notNull(),
    /** The session's newest invocation id: the list's order. */
    lastId: integer('last_id').notNull(),
    invocations: integer('invocations').notNull(),
    denials: integer('denials').notNull(),
    asks: integer('asks').notNull(),
    modified: integer('modified').notNull(),
    failures: integer('failures').notNull(),
    timeouts: integer('timeouts').notNull(),
    stale: integer('stale').notNull().default(0),
  },
  (t) => [
    index('session_summaries_last_id').on(t.lastId),
    index('session_summaries_stale')
      .on(t.sessionId)
      .where(sql`stale = 1`),
  ],
);

/**
 * This ledger's identity as a ship source (src/ship/, docs/ship.md): one row, created by the
 * first `hookledger ship`, never changed, so that the central ledger keeps the machine's records
 * apart from every other machine's. Local only: a PostgreSQL ledger has no such table (what it
 * has shipped is recorded centrally, with the records, in one transaction).
 */
export const shipSource = sqliteTable('ship_source', {
  /** Always 1: one identity per ledger. */
  id: integer('id').primaryKey(),
  sourceId: text('source_id').notNull(),
  createdAt: integer('created_at').notNull(),
});
