import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml';
import { ConfigError, describeThrown } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import {
  agentHooksOf,
  isHookledgerCommand,
  mergeHookledgerHandlers,
  pointBudgetMs,
  readJsonConfig,
  withHooks,
  type AgentHandler,
  type AgentHooks,
  type MergeResult,
} from './agent-install.js';
import { isRecord } from './agent-payload.js';
import { CODEX_EVENT_POINTS, pointForCodexEvent } from './codex-input.js';

/**
 * Codex CLI hook configuration (reference/other-agents-hooks.md): `.codex/hooks.json` or the
 * `[hooks]` of `.codex/config.toml`, in the project or in ~/.codex. Both have Claude Code's
 * shape; all layers add up.
 */

/** Events install-codex registers by default: every Codex event with a hookledger point of its own. */
export const CODEX_INSTALL_EVENTS: readonly string[] = Object.keys(CODEX_EVENT_POINTS).filter((e) => CODEX_EVENT_POINTS[e] !== 'other');

/** Codex's own limit for a handler without `timeout`, seconds. */
export const CODEX_DEFAULT_TIMEOUT_S = 600;

/** Where a Codex configuration lives. */
export function codexConfigPath(scope: 'project' | 'user', format: 'json' | 'toml', cwd: string, home: string): string {
  return join(scope === 'user' ? home : cwd, '.codex', format === 'json' ? 'hooks.json' : 'config.toml');
}

/**
 * The `timeout` (seconds, whole) for each event's handler: what the point's hooks need in a
 * row (see pointBudgetMs), never below Codex's default (a lower limit only risks killing a
 * slow but correct decision, and Codex then lets the action go ahead).
 */
export function codexTimeouts(hookSet: HookSet, events: readonly string[], backgroundDrainMs: number): Record<string, number> {
  return Object.fromEntries(
    events.map((event) => [
      event,
      Math.max(CODEX_DEFAULT_TIMEOUT_S, Math.ceil(pointBudgetMs(hookSet, pointForCodexEvent(event), backgroundDrainMs) / 1000)),
    ]),
  );
}

export interface CodexInstall {
  command: string;
  events: readonly string[];
  timeouts: Readonly<Record<string, number>>;
}

const ours = (handler: AgentHandler) => isHookledgerCommand(handler, 'codex');
const desiredFor = (install: CodexInstall) => (event: string) => ({
  type: 'command',
  command: install.command,
  timeout: install.timeouts[event] ?? CODEX_DEFAULT_TIMEOUT_S,
});

/** The new text of a hooks.json (null install = remove hookledger), with what changed. */
export function installCodexJson(path: string, install: CodexInstall | null): MergeResult & { text: string } {
  const file = readJsonConfig(path);
  const merged = mergeHookledgerHandlers(
    agentHooksOf(file.value.hooks, path),
    install?.events ?? [],
    install ? desiredFor(install) : () => ({}),
    ours,
  );
  return { ...merged, text: merged.changed ? withHooks(file, merged.hooks) : file.text };
}

const BEGIN = '# >>> hookledger (written by hookledger install-codex; this block is replaced on reinstall)';
const END = '# <<< hookledger';

/**
 * The new text of a config.toml (null install = remove hookledger). hookledger's entries live
 * in one marked block at the end of the file, as `[[hooks.Event]]` tables, so that
 * everything else in the file (comments, order, formatting) stays byte for byte. The result
 * is parsed back before it is returned: a file whose `hooks` cannot take appended tables
 * (an inline `hooks = {…}`) is reported, not broken.
 */
export function installCodexToml(path: string, install: CodexInstall | null): MergeResult & { text: string } {
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new ConfigError(`${path}: cannot read: ${describeThrown(error)}`);
  }
  const rest = removeBlock(text, path);
  const others = tomlHooks(rest, path);
  const stray = Object.values(others).flatMap((groups) => groups.flatMap((g) => g.hooks.filter(ours)));
  if (stray.length > 0) {
    throw new ConfigError(`${path}: a hookledger codex handler outside hookledger's marked block; remove it by hand, then install again`);
  }
  const current = tomlHooks(text, path);
  const mine: AgentHooks = {};
  for (const event of install?.events ?? []) mine[event] = [{ matcher: '*', hooks: [desiredFor(install!)(event)] }];
  const block = Object.keys(mine).length > 0 ? `${BEGIN}\n${stringifyToml({ hooks: mine }).trim()}\n${END}\n` : '';
  const base = rest.trimEnd();
  const next = block === '' ? (base === '' ? '' : `${base}\n`) : `${base === '' ? '' : `${base}\n\n`}${block}`;
  const after = tomlHooks(next, path);
  const merged = mergeHookledgerHandlers(current, install?.events ?? [], install ? desiredFor(install) : () => ({}), ours);
  const changed = next !== text;
  // What Codex will read must be what was intended: every event's hookledger handler, once.
  for (const event of install?.events ?? []) {
    const found = (after[event] ?? []).flatMap((g) => g.hooks.filter(ours));
    if (found.length !== 1) throw new ConfigError(`${path}: hooks.${event} could not take hookledger's entry (is [hooks] written inline?)`);
  }
  return { ...merged, changed, text: changed ? next : text };
}

function removeBlock(text: string, path: string): string {
  const start = text.indexOf(BEGIN);
  if (start === -1) return text;
  const end = text.indexOf(END, start);
  if (end === -1) throw new ConfigError(`${path}: hookledger's block has no end marker ("${END}"); fix the file by hand`);
  return text.slice(0, start) + text.slice(end + END.length).replace(/^\r?\n/, '');
}

function tomlHooks(text: string, path: string): AgentHooks {
  let value: unknown;
  try {
    value = parseToml(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid TOML (${describeThrown(error).split('\n')[0]}); fix it before hookledger edits it`);
  }
  return agentHooksOf(isRecord(value) ? value.hooks : undefined, path);
}
