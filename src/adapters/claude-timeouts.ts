import type { HookSet } from '../domain/hooks.js';
import { pointForClaudeEvent } from '../domain/points.js';

/**
 * The `timeout` install-claude writes on each hookledger handler. hookledger runs a point's
 * hooks one after another inside one Claude Code handler, so the handler needs as long as
 * all of them together; if Claude Code's limit is shorter it kills hookledger, discards the
 * answer and lets the action proceed (reference/claude-code-hooks.md, "Handler types").
 */

/**
 * Room for what is not a hook's own timeout: starting node, loading the config, opening the
 * ledger, recording, and the grace a killed hook's streams get to close.
 */
export const HANDLER_TIMEOUT_MARGIN_MS = 2000;

/** Claude Code never waits longer than this for SessionEnd hooks, whatever `timeout` says. */
export const SESSION_END_MAX_TIMEOUT_S = 60;

/** Claude Code's own limit for a command/http handler without `timeout`, in seconds. */
export function claudeDefaultTimeoutSeconds(event: string): number {
  if (event === 'UserPromptSubmit') return 30;
  if (event === 'MessageDisplay') return 10;
  // A budget shared by all SessionEnd hooks, raised by the largest per-hook `timeout`.
  if (event === 'SessionEnd') return 1.5;
  return 600;
}

export interface HandlerTimeoutOptions {
  /**
   * How long hookledger waits for background hooks after answering (command mode's
   * `--background-deadline-ms`); 0 for http handlers, where `serve` runs them after the response.
   */
  backgroundDrainMs: number;
}

export interface HandlerTimeouts {
  /** Seconds per Claude Code event, whole numbers. */
  timeouts: Record<string, number>;
  /** One line per event whose hooks need more than Claude Code allows. */
  warnings: string[];
}

/**
 * The `timeout` (seconds) for each event's hookledger handler: the timeouts of the foreground
 * hooks at the event's point added up, plus the background drain when hooks run in the
 * background there, plus {@link HANDLER_TIMEOUT_MARGIN_MS}, rounded up. Never below Claude
 * Code's own default for the event (a lower limit protects nothing and only risks killing a
 * slow but correct decision), except SessionEnd, whose 1.5 s default is exactly what must be
 * raised; it is capped at {@link SESSION_END_MAX_TIMEOUT_S} with a warning. With no hook
 * set (an http handler installed without --config) each event gets its default floor.
 */
export function handlerTimeouts(hookSet: HookSet | null, events: readonly string[], options: HandlerTimeoutOptions): HandlerTimeouts {
  const timeouts: Record<string, number> = {};
  const warnings: string[] = [];
  for (const event of events) {
    const point = pointForClaudeEvent(event);
    const hooks = (hookSet?.hooks ?? []).filter((hook) => hook.points.includes(point));
    const foregroundMs = hooks.filter((hook) => hook.mode === 'foreground').reduce((sum, hook) => sum + hook.timeoutMs, 0);
    const drainMs = hooks.some((hook) => hook.mode === 'background') ? options.backgroundDrainMs : 0;
    const needed = Math.ceil((foregroundMs + drainMs + HANDLER_TIMEOUT_MARGIN_MS) / 1000);
    if (event === 'SessionEnd') {
      if (needed > SESSION_END_MAX_TIMEOUT_S) {
        warnings.push(
          `SessionEnd: the hooks at ${point} may need ${needed} s but Claude Code stops SessionEnd hooks after ${SESSION_END_MAX_TIMEOUT_S} s; timeout capped at ${SESSION_END_MAX_TIMEOUT_S} (lower the hooks' timeoutMs)`,
        );
      }
      timeouts[event] = Math.min(needed, SESSION_END_MAX_TIMEOUT_S);
    } else {
      timeouts[event] = Math.max(needed, Math.ceil(claudeDefaultTimeoutSeconds(event)));
    }
  }
  return { timeouts, warnings };
}
