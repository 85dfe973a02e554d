import type { Outcome } from '../domain/outcomes.js';
import type { TelemetryRecord } from './record.js';

/**
 * The attribute names hookledger exports (docs/telemetry.md has the table). OpenTelemetry's
 * GenAI and general conventions where one exists, so records join an agent's own telemetry
 * (Claude Code's `session.id` and `tool_use_id`); `hookledger.*` for the rest.
 */
export const ATTR = {
  // OpenTelemetry semantic conventions (gen_ai.* are "development" status in semconv 1.45).
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  conversationId: 'gen_ai.conversation.id',
  sessionId: 'session.id',
  // hookledger's own.
  invocationId: 'hookledger.invocation.id',
  point: 'hookledger.point',
  eventName: 'hookledger.event_name',
  agent: 'hookledger.agent',
  turn: 'hookledger.turn',
  status: 'hookledger.status',
  decision: 'hookledger.decision',
  decisiveHookId: 'hookledger.decisive_hook.id',
  reasonCode: 'hookledger.reason_code',
  message: 'hookledger.message',
  modified: 'hookledger.modified',
  durationUs: 'hookledger.duration_us',
  hookSetName: 'hookledger.hook_set.name',
  hookSetVersion: 'hookledger.hook_set.version',
  hookSetFingerprint: 'hookledger.hook_set.fingerprint',
  hooksMatched: 'hookledger.hooks.matched',
  hooksFailed: 'hookledger.hooks.failed',
  hooksTimedOut: 'hookledger.hooks.timed_out',
  hookId: 'hookledger.hook.id',
  hookPriority: 'hookledger.hook.priority',
  hookRegistrationIndex: 'hookledger.hook.registration_index',
  hookExecutionOrder: 'hookledger.hook.execution_order',
  hookMode: 'hookledger.hook.mode',
  hookCapability: 'hookledger.hook.capability',
  hookRuntime: 'hookledger.hook.runtime',
  hookStatus: 'hookledger.hook.status',
  hookDecision: 'hookledger.hook.decision',
  hookDecisive: 'hookledger.hook.decisive',
  hookReasonCode: 'hookledger.hook.reason_code',
  hookMessage: 'hookledger.hook.message',
  hookFailureReason: 'hookledger.hook.failure_reason',
  hookFailureDetail: 'hookledger.hook.failure_detail',
  hookTimeoutMs: 'hookledger.hook.timeout_ms',
  hookDurationUs: 'hookledger.hook.duration_us',
} as const;

/** The event name of the log record per decision. */
export const DECISION_EVENT = 'hookledger.decision';

export type AttributeValue = string | number | boolean;
export type Attributes = Record<string, AttributeValue>;

/** Sets only the values that exist: OpenTelemetry has no null attribute. */
function put(attributes: Attributes, key: string, value: AttributeValue | null | undefined): void {
  if (value !== null && value !== undefined) attributes[key] = value;
}

/** What identifies the invocation: on its span, each hook span and the decision's log record. */
function identity(r: TelemetryRecord): Attributes {
  const a: Attributes = { [ATTR.invocationId]: r.id, [ATTR.point]: r.point };
  put(a, ATTR.toolName, r.toolName);
  put(a, ATTR.toolCallId, r.toolUseId);
  put(a, ATTR.sessionId, r.sessionId);
  put(a, ATTR.conversationId, r.sessionId);
  return a;
}

/** The attributes of an invocation's span and of its decision's log record. */
export function invocationAttributes(r: TelemetryRecord): Attributes {
  const a = identity(r);
  put(a, ATTR.eventName, r.eventName);
  put(a, ATTR.agent, r.agent);
  put(a, ATTR.turn, r.turn);
  a[ATTR.status] = r.status;
  put(a, ATTR.decision, r.decision);
  put(a, ATTR.decisiveHookId, r.decisiveHookId);
  put(a, ATTR.reasonCode, r.reasonCode);
  put(a, ATTR.message, r.message);
  a[ATTR.modified] = r.modified;
  put(a, ATTR.durationUs, r.durationUs);
  a[ATTR.hookSetName] = r.hookSet.name;
  a[ATTR.hookSetVersion] = r.hookSet.version;
  a[ATTR.hookSetFingerprint] = r.hookSet.fingerprint;
  a[ATTR.hooksMatched] = r.outcomes.length;
  a[ATTR.hooksFailed] = r.outcomes.filter((o) => o.status === 'failed').length;
  a[ATTR.hooksTimedOut] = r.outcomes.filter((o) => o.status === 'timed_out').length;
  return a;
}

/** The attributes of one hook's span. */
export function hookAttributes(r: TelemetryRecord, o: Outcome): Attributes {
  const a = identity(r);
  a[ATTR.hookId] = o.hookId;
  a[ATTR.hookPriority] = o.priority;
  a[ATTR.hookRegistrationIndex] = o.registrationIndex;
  put(a, ATTR.hookExecutionOrder, o.executionOrder);
  a[ATTR.hookMode] = o.mode;
  a[ATTR.hookCapability] = o.capability;
  a[ATTR.hookRuntime] = o.runtime;
  a[ATTR.hookStatus] = o.status;
  put(a, ATTR.hookDecision, o.decision);
  a[ATTR.hookDecisive] = o.decisive;
  put(a, ATTR.hookReasonCode, o.reasonCode);
  put(a, ATTR.hookMessage, o.message);
  put(a, ATTR.hookFailureReason, o.failureReason);
  put(a, ATTR.hookFailureDetail, o.failureDetail);
  a[ATTR.hookTimeoutMs] = o.timeoutMs;
  put(a, ATTR.hookDurationUs, o.durationUs);
  return a;
}

/** A hook ran (or started): it gets a span. Skipped and still-pending hooks do not. */
export function executed(o: Outcome): boolean {
  return o.startedAt !== null && o.status !== 'skipped' && o.status !== 'pending';
}

/** The human-readable body of the decision's log record. */
export function decisionBody(r: TelemetryRecord): string {
  const who = r.decisiveHookId !== null ? ` by ${r.decisiveHookId}` : '';
  const what = r.toolName !== null ? ` ${r.toolName}` : '';
  return `${r.decision ?? r.status}${who} at ${r.point}${what}${r.message !== null ? `: ${r.message}` : ''}`;
}
