import type { HookSet } from '../domain/hooks.js';
import type { Outcome } from '../domain/outcomes.js';
import { capText } from '../ledger/json-text.js';
import { Redactor } from '../ledger/redact.js';
import type { ExportRecord } from '../ledger/queries/export.js';
import { inputPathOf, redactOutcome, storedDecision } from '../ledger/stored-form.js';
import type { RunObservation } from '../runner/observer.js';

/**
 * One invocation as telemetry exports it: the stored (redacted) form, whether it comes from a
 * live decision or from the ledger (`export --format otlp`), so both export the same attributes.
 * The fields of the ledger's export record that telemetry uses (message redacted and capped as
 * stored; outcomes with hook-supplied text redacted), plus whether the input was modified.
 */
export type TelemetryRecord = Pick<
  ExportRecord,
  | 'id'
  | 'startedAt'
  | 'durationUs'
  | 'point'
  | 'eventName'
  | 'sessionId'
  | 'turn'
  | 'toolName'
  | 'toolUseId'
  | 'agent'
  | 'status'
  | 'decision'
  | 'decisiveHookId'
  | 'reasonCode'
  | 'message'
  | 'outcomes'
> & { modified: boolean; hookSet: Pick<ExportRecord['hookSet'], 'name' | 'version' | 'fingerprint'> };

/** A ledger export record as telemetry exports it (already redacted by the write path). */
export function recordFromExport(r: ExportRecord): TelemetryRecord {
  return {
    id: r.id,
    startedAt: r.startedAt,
    durationUs: r.durationUs,
    point: r.point,
    eventName: r.eventName,
    sessionId: r.sessionId,
    turn: r.turn,
    toolName: r.toolName,
    toolUseId: r.toolUseId,
    agent: r.agent,
    status: r.status,
    decision: r.decision,
    decisiveHookId: r.decisiveHookId,
    reasonCode: r.reasonCode,
    message: r.message,
    modified: r.modifiedInput !== null,
    hookSet: { name: r.hookSet.name, version: r.hookSet.version, fingerprint: r.hookSet.fingerprint },
    outcomes: r.outcomes,
  };
}

/**
 * Redacts live observations exactly as the ledger's write path stores them (the hook set's
 * `redact` rules, ledger/stored-form.ts), so exported text never holds what the ledger would not.
 */
export class ObservationRedactor {
  private readonly redactors = new Map<string, Redactor>();

  private redactorFor(hookSet: HookSet): Redactor {
    let redactor = this.redactors.get(hookSet.fingerprint);
    if (!redactor) this.redactors.set(hookSet.fingerprint, (redactor = new Redactor(hookSet.redact ?? {})));
    return redactor;
  }

  /** The record of a decision just made. */
  decided(observation: Extract<RunObservation, { kind: 'decided' }>): TelemetryRecord {
    const { report, hookSet } = observation;
    const redactor = this.redactorFor(hookSet);
    // The invocation's own identifying fields, redacted at the paths they have in the invocation.
    const { eventName, sessionId, turn, toolName, toolUseId, agent } = redactor.redact({
      eventName: observation.invocation.eventName,
      sessionId: observation.invocation.sessionId,
      turn: observation.invocation.turn,
      toolName: observation.invocation.toolName,
      toolUseId: observation.invocation.toolUseId,
      agent: observation.invocation.agent,
    }).value;
    const inputPath = inputPathOf(report.point);
    return {
      id: report.invocationId,
      startedAt: report.startedAt,
      durationUs: report.durationUs,
      point: report.point,
      eventName,
      sessionId,
      turn,
      toolName,
      toolUseId,
      agent,
      status: 'completed',
      decision: report.decision,
      decisiveHookId: report.decisiveHookId,
      reasonCode: report.reasonCode,
      message: storedDecision(redactor, report.point, report).message,
      modified: report.modifiedInput !== null,
      hookSet: { name: hookSet.name, version: hookSet.version, fingerprint: hookSet.fingerprint },
      outcomes: report.outcomes.map((o) => this.outcome(redactor, o, inputPath)),
    };
  }

  /** A background outcome completed after its invocation was decided. */
  background(observation: Extract<RunObservation, { kind: 'background_done' }>): Outcome {
    return this.outcome(this.redactorFor(observation.hookSet), observation.outcome, inputPathOf(observation.outcome.point));
  }

  private outcome(redactor: Redactor, o: Outcome, inputPath: string[]): Outcome {
    const stored = redactOutcome(redactor, o, inputPath).outcome;
    return { ...stored, message: capText(stored.message), failureDetail: capText(stored.failureDetail) };
  }
}
