/**
 * hookledger — a durable, audited hook runner for AI agents.
 *
 * ```ts
 * import { defineHooks, deny, openLedger, createRunner, explain } from 'hookledger';
 *
 * const hooks = defineHooks({ name: 'guardrails', version: '1', hooks: [
 *   { id: 'no-rm-rf', point: 'pre_tool_use', match: 'Bash', capability: 'guardrail',
 *     run: (inv) => String((inv.toolInput as { command?: string })?.command).includes('rm -rf /')
 *       ? deny('refusing to delete /', 'safety_violation') : undefined },
 * ] });
 * const ledger = openLedger({ path: 'ledger.db' });
 * const runner = createRunner({ hookSet: hooks, ledger });
 * const report = await runner.run({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'ls' } });
 * console.log(explain(ledger, report.invocationId));
 * await runner.close();
 * ledger.close();
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
  UsageError,
  LedgerError,
  NotFoundError,
  IntegrityError,
} from './domain/errors.js';
export { openLedger } from './ledger/open.js';
export type { Ledger, OpenLedgerOptions, SyncMode } from './ledger/open.js';
export { resolveLedgerPath } from './ledger/paths.js';
export { createRunner, parseInvocation } from './runner/runner.js';
export type { Runner, RunnerOptions } from './runner/runner.js';
export { explain } from './ledger/queries/explain.js';
export type { Explanation } from './ledger/queries/explain.js';
export { loadHookSet } from './config/load.js';
export { invocationFromClaude } from './adapters/claude-input.js';
