/**
 * hookledger — a durable, audited hook runner for AI agents.
 *
 * ```ts
 * import { defineHooks, deny, openLedger, createRunner } from 'hookledger';
 *
 * const hooks = defineHooks({ name: 'guardrails', version: '1', hooks: [
 *   { id: 'no-rm-rf', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail',
 *     run: (inv) => String((inv.toolInput as { command?: string })?.command).includes('rm -rf /')
 *       ? deny('refusing to delete /', 'safety_violation') : undefined },
 * ] });
 * const ledger = await openLedger({ path: 'ledger.db' }); // or { url: 'postgres://…' }
 * const runner = createRunner({ hookSet: hooks, ledger });
 * const report = await runner.run({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'ls' } });
 * console.log(await ledger.explain(report.invocationId));
 * await runner.close();
 * await ledger.close();
 * ```
 * @packageDocumentation
 */
export { defineHooks, resolveHookSet, compileMatcher, canonicalJson } from './domain/hooks.js';
export type {
  HookSet,
  HookSetDefinition,
  HookDefinition,
  HookFunction,
  HookContext,
  ResolvedHook,
  RuntimeSpec,
  Strategy,
  FailurePolicy,
} from './domain/hooks.js';
export { allow, deny, ask, modify, parseHookResult, REASON_CODES, DECISIONS } from './domain/results.js';
export type { HookResult, HookResultInput, Decision, ReasonCode, ReturnedDecision } from './domain/results.js';
export { POINTS, resolvePoint, CLAUDE_EVENT_POINTS } from './domain/points.js';
export type { Point } from './domain/points.js';
export type { Invocation, InvocationInput } from './domain/invocation.js';
export type { Outcome, Report, OutcomeStatus, FailureReason, SkipReason, Mode, Capability } from './domain/outcomes.js';
export {
  HookledgerError,
  ConfigError,
  InputError,
  OptionError,
  UsageError,
  LedgerError,
  NotFoundError,
  IntegrityError,
} from './domain/errors.js';
// The ledger: one interface, whatever engine stores it (README: Architecture).
export { openLedger, isPostgresUrl, printableUrl } from './ledger/ledger.js';
export type {
  Ledger,
  LedgerEngine,
  OpenOptions,
  SqliteOpenOptions,
  PostgresOpenOptions,
  ReplaySourceReader,
  ReplayRunWriter,
} from './ledger/ledger.js';
export type { InvocationRecorder, RecordingLedger, InvocationResult, MaybePromise } from './runner/recorder.js';
export { SqliteLedger } from './ledger/sqlite-ledger.js';
export type { OpenLedgerOptions, SyncMode } from './ledger/open.js';
export { resolveLedgerPath } from './ledger/paths.js';
export { createRunner, parseInvocation } from './runner/runner.js';
export type { Runner, RunnerOptions } from './runner/runner.js';
export { explain } from './ledger/queries/explain.js';
export type { Explanation } from './ledger/queries/explain.js';
export { loadHookSet } from './config/load.js';
export { invocationFromClaude } from './adapters/claude-input.js';

// Claude Code: command-hook adapter, HTTP server, settings install/import (docs/claude-code.md).
export { claudePayloadSchema, claudeEventNameOf } from './adapters/claude-input.js';
export type { ClaudePayload } from './adapters/claude-input.js';
export { claudeAnswer, internalFailureAnswer, claudeHttpBody, isBlockingEvent, decisionReason } from './adapters/claude-output.js';
export type { ClaudeAnswer } from './adapters/claude-output.js';
export { answerClaudePayload, decideClaudeCommand, resolveOnErrorPolicy } from './adapters/claude.js';
export type { OnErrorPolicy, ClaudeOutcome } from './adapters/claude.js';
export { createHookServer, resolveServerToken, DEFAULT_MAX_BODY_BYTES } from './adapters/server.js';
export type { HookServer, HookServerOptions, ResolvedToken } from './adapters/server.js';
export {
  importClaudeHooks,
  installHookledger,
  uninstallHookledger,
  hookledgerCommand,
  readSettings,
  writeSettings,
} from './adapters/claude-settings.js';
export type { ImportResult, InstallResult, ClaudeSettings } from './adapters/claude-settings.js';
export { handlerTimeouts } from './adapters/claude-timeouts.js';
export type { HandlerTimeouts } from './adapters/claude-timeouts.js';

// The SQLite engine's query functions, for SQLite-only tools: they take a SqliteLedger. Callers
// that should work on any engine use the Ledger methods of the same names instead.

// Reports (docs/reports.md).
export { listDenials, groupDenials, DENIAL_GROUPS } from './ledger/queries/denials.js';
export type { DenialRow, DenialPage, DenialGroup, DenialGroups, DenialGroupBy } from './ledger/queries/denials.js';
export { listSessions, sessionTimeline, sessionSummary } from './ledger/queries/sessions.js';
export type { SessionSummary, SessionPage, SessionTimeline, TimelineEvent } from './ledger/queries/sessions.js';
export { hookHealth, DEFAULT_HEALTH_WINDOW_MS } from './ledger/queries/health.js';
export type { HookHealth, HealthReport, HealthOptions } from './ledger/queries/health.js';
export { exportRecords, writeExport, writeChunks, CSV_COLUMNS, EXPORT_FORMATS } from './ledger/queries/export.js';
export type { ExportRecord, ExportFormat } from './ledger/queries/export.js';
export { invocationFilterSchema, parseInvocationFilter } from './ledger/queries/filters.js';
export { parseTimeBound, parseNamedTimeBound } from './domain/time.js';
export type { InvocationFilter } from './ledger/queries/filters.js';
export type { PageRequest } from './ledger/queries/paging.js';

// Replay (docs/replay.md).
export { replay, defaultConcurrency, DEFAULT_REPLAY_CONCURRENCY } from './replay/replay.js';
export type { ReplayOptions, ReplayRunOutcome, ReplayProgress } from './replay/replay.js';
export { listReplayRuns, getReplayRun, showReplayRun } from './ledger/queries/replay-runs.js';
export type { ReplayRunSummary, ReplayRunDetail, HookSetRef } from './ledger/queries/replay-runs.js';
export { CHANGE_KINDS, HOOK_CHANGE_KINDS } from './domain/replay.js';
export type {
  ChangeKind,
  HookChange,
  HookChangeKind,
  HookState,
  DecisionState,
  ReplayResult,
  ReplayResultDetail,
  ReplayTotals,
  ReplayRunStatus,
} from './domain/replay.js';

// Integrity: tamper-evidence chain, redaction, retention, legal holds (docs/integrity.md).
export { verifyLedger, assertIntact, readAnchor, writeAnchor } from './ledger/verify.js';
export type { VerifyReport, VerifyOptions, IntegrityProblem, Anchor, AnchorCheck } from './ledger/verify.js';
export { redact, Redactor, DEFAULT_PATTERNS } from './ledger/redact.js';
export type { Redacted } from './ledger/redact.js';
export type { RedactConfig } from './domain/redaction.js';
export { RedactionRuleError } from './domain/redaction.js';
export { pruneLedger } from './ledger/prune.js';
export type { PruneOptions, PruneReport } from './ledger/prune.js';
export { placeHold, releaseHold, listHolds } from './ledger/holds.js';
export type { LegalHold } from './ledger/holds.js';

// Worker isolation for hooks that may block the event loop (docs/reliability.md).
export { ISOLATIONS } from './domain/hooks.js';
export type { Isolation } from './domain/hooks.js';
export { closeIdleWorkers } from './runtimes/worker.js';
// For an embedding process that is told to stop: command hooks run in their own process groups.
export { killRunningHookProcesses } from './runtimes/process-groups.js';
