import { join } from 'node:path';
import type { HookSet } from '../domain/hooks.js';
import {
  agentHooksOf,
  isHookledgerCommand,
  mergeHookledgerHandlers,
  pointBudgetMs,
  readJsonConfig,
  withHooks,
  type AgentHandler,
  type MergeResult,
} from './agent-install.js';
import { isRecord } from './agent-payload.js';
import { GEMINI_EVENT_POINTS, pointForGeminiEvent } from './gemini-input.js';

/**
 * Gemini CLI settings (reference/other-agents-hooks.md): `hooks` in `.gemini/settings.json`
 * (project) or `~/.gemini/settings.json` (user), timeouts in milliseconds.
 */

/** Events install-gemini registers by default: every Gemini event with a hookledger point of its own. */
export const GEMINI_INSTALL_EVENTS: readonly string[] = Object.keys(GEMINI_EVENT_POINTS).filter((e) => GEMINI_EVENT_POINTS[e] !== 'other');

/** Gemini CLI's own limit for a handler without `timeout`, ms. */
export const GEMINI_DEFAULT_TIMEOUT_MS = 60_000;

/** The handler `name` hookledger registers under (what `hooksConfig.disabled` would list). */
export const GEMINI_HANDLER_NAME = 'hookledger';

export function geminiSettingsPath(scope: 'project' | 'user', cwd: string, home: string): string {
  return join(scope === 'user' ? home : cwd, '.gemini', 'settings.json');
}

/** The `timeout` (ms) per event: what the point's hooks need in a row, never below Gemini's default. */
export function geminiTimeouts(hookSet: HookSet, events: readonly string[], backgroundDrainMs: number): Record<string, number> {
  return Object.fromEntries(
    events.map((event) => [
      event,
      Math.max(GEMINI_DEFAULT_TIMEOUT_MS, pointBudgetMs(hookSet, pointForGeminiEvent(event), backgroundDrainMs)),
    ]),
  );
}

export interface GeminiInstall {
  command: string;
  events: readonly string[];
  timeouts: Readonly<Record<string, number>>;
}

const ours = (handler: AgentHandler) => isHookledgerCommand(handler, 'gemini');

/** The new text of a settings.json (null install = remove hookledger), with what changed and any warnings. */
export function installGemini(path: string, install: GeminiInstall | null): MergeResult & { text: string; warnings: string[] } {
  const file = readJsonConfig(path);
  const desired = (event: string) => ({
    type: 'command',
    name: GEMINI_HANDLER_NAME,
    description: 'hookledger: audited guardrails',
    command: install!.command,
    timeout: install!.timeouts[event] ?? GEMINI_DEFAULT_TIMEOUT_MS,
  });
  const merged = mergeHookledgerHandlers(agentHooksOf(file.value.hooks, path), install?.events ?? [], install ? desired : () => ({}), ours);
  const warnings: string[] = [];
  const config = file.value.hooksConfig;
  if (install && isRecord(config)) {
    // Not changed on the user's behalf, but a guardrail that never runs must not go unnoticed.
    if (config.enabled === false)
      warnings.push(`${path}: hooksConfig.enabled is false, so Gemini CLI runs no hooks (hookledger included) until it is true`);
    if (Array.isArray(config.disabled) && config.disabled.includes(GEMINI_HANDLER_NAME)) {
      warnings.push(`${path}: hooksConfig.disabled lists "${GEMINI_HANDLER_NAME}", so Gemini CLI skips hookledger`);
    }
  }
  return { ...merged, warnings, text: merged.changed ? withHooks(file, merged.hooks) : file.text };
}
