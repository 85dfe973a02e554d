import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { applyEdits, modify, parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { ConfigError, describeThrown } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import type { Point } from '../domain/points.js';
import { isRecord } from './agent-payload.js';
import { defaultHookledgerBin, projectPathWord, shellWord } from './claude-settings.js';
import { HANDLER_TIMEOUT_MARGIN_MS } from './claude-timeouts.js';

/**
 * Installing hookledger into the hook configuration of agents whose hooks are shaped like
 * Claude Code's (`{hooks: {Event: [{matcher, hooks: [handler]}]}}`): Codex CLI and Gemini CLI.
 * One hookledger handler per event with matcher `*`; every other handler and key is kept.
 */

/** A handler in an agent's hook configuration; unknown keys are kept. */
export type AgentHandler = Record<string, unknown> & { type?: unknown; command?: unknown };
/** A matcher group. */
export type AgentGroup = Record<string, unknown> & { matcher?: unknown; hooks: AgentHandler[] };
export type AgentHooks = Record<string, AgentGroup[]>;

export interface MergeResult {
  hooks: AgentHooks;
  changed: boolean;
  /** Events whose hookledger entry was added or rewritten. */
  written: string[];
  /** Events whose old hookledger entry was removed. */
  removed: string[];
  /** Handlers that are not hookledger's (they still run, beside hookledger). */
  others: number;
}

/** Validates the `hooks` value of a configuration, one line naming what is wrong. */
export function agentHooksOf(value: unknown, where: string): AgentHooks {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new ConfigError(`${where}: hooks must be an object of events`);
  for (const [event, groups] of Object.entries(value)) {
    if (!Array.isArray(groups)) throw new ConfigError(`${where}: hooks.${event} must be a list of matcher groups`);
    groups.forEach((group, i) => {
      if (!isRecord(group) || !Array.isArray(group.hooks) || !group.hooks.every(isRecord)) {
        throw new ConfigError(`${where}: hooks.${event}[${i}] must be an object with a "hooks" list of handlers`);
      }
    });
  }
  return value as AgentHooks;
}

/**
 * Puts exactly one hookledger handler (`desired(event)`, matcher `*`) on each event in
 * `events` and none elsewhere. Idempotent: an event that already has exactly that handler is
 * left alone. Other handlers are kept where they were; a group left empty is dropped.
 */
export function mergeHookledgerHandlers(
  current: AgentHooks,
  events: readonly string[],
  desired: (event: string) => AgentHandler,
  isOurs: (handler: AgentHandler) => boolean,
): MergeResult {
  const hooks: AgentHooks = structuredClone(current);
  const wanted = new Set(events);
  const written: string[] = [];
  const removed: string[] = [];
  let others = 0;
  for (const event of new Set([...Object.keys(hooks), ...wanted])) {
    const groups = hooks[event] ?? [];
    const ours = groups.flatMap((g) => g.hooks.filter(isOurs).map((h) => ({ group: g, handler: h })));
    others += groups.reduce((n, g) => n + g.hooks.filter((h) => !isOurs(h)).length, 0);
    const upToDate =
      wanted.has(event) &&
      ours.length === 1 &&
      (ours[0]!.group.matcher ?? '*') === '*' &&
      JSON.stringify(ours[0]!.handler) === JSON.stringify(desired(event));
    if (upToDate || (ours.length === 0 && !wanted.has(event))) continue;
    const kept = groups.map((g) => ({ ...g, hooks: g.hooks.filter((h) => !isOurs(h)) })).filter((g) => g.hooks.length > 0);
    if (wanted.has(event)) {
      kept.push({ matcher: '*', hooks: [desired(event)] });
      written.push(event);
    } else {
      removed.push(event);
    }
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  return { hooks, changed: written.length > 0 || removed.length > 0, written, removed, others };
}

/**
 * The time (ms) hookledger's handler needs at a point: the foreground hooks there one after
 * another, the background drain when background hooks run there, and a margin for start-up
 * and recording (the same sizing as install-claude's).
 */
export function pointBudgetMs(hookSet: HookSet, point: Point, backgroundDrainMs: number): number {
  const hooks = hookSet.hooks.filter((hook) => hook.points.includes(point));
  const foregroundMs = hooks.filter((hook) => hook.mode === 'foreground').reduce((sum, hook) => sum + hook.timeoutMs, 0);
  const drainMs = hooks.some((hook) => hook.mode === 'background') ? backgroundDrainMs : 0;
  return foregroundMs + drainMs + HANDLER_TIMEOUT_MARGIN_MS;
}

/** A JSON (or JSONC) configuration file as text, with its parsed value. */
export interface JsonConfigFile {
  path: string;
  text: string;
  value: Record<string, unknown>;
  existed: boolean;
}

/** Reads a JSON configuration file, tolerating comments and trailing commas; a missing file is empty. */
export function readJsonConfig(path: string): JsonConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path, text: '', value: {}, existed: false };
    throw new ConfigError(`${path}: cannot read: ${describeThrown(error)}`);
  }
  if (text.trim() === '') return { path, text, value: {}, existed: true };
  const errors: ParseError[] = [];
  const value = parse(text, errors, { allowTrailingComma: true }) as unknown;
  if (errors.length > 0) {
    const first = errors[0]!;
    throw new ConfigError(
      `${path}: not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset}); fix it before hookledger edits it`,
    );
  }
  if (!isRecord(value)) throw new ConfigError(`${path}: expected a JSON object`);
  return { path, text, value, existed: true };
}

/**
 * The file's text with `hooks` replaced, edited in place: every other key, its order,
 * comments and formatting stay as they were. An empty `hooks` is removed.
 */
export function withHooks(file: JsonConfigFile, hooks: AgentHooks): string {
  const base = file.text.trim() === '' ? '{}\n' : file.text;
  const value = Object.keys(hooks).length > 0 ? hooks : undefined;
  const edits = modify(base, ['hooks'], value, { formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' } });
  const text = applyEdits(base, edits);
  return text.endsWith('\n') ? text : `${text}\n`;
}

/** Writes a configuration file atomically (a temp file renamed over it). */
export function writeConfigText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.hookledger-${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}

/**
 * How the agent starts hookledger unless `--bin` says otherwise: node on this package's
 * single-file bundle for the agent (dist/bundle/NAME.cjs) when built, else `hookledger` from
 * PATH. With `projectDir`, a package installed in the project is written relative to the
 * agent's project variable (`projectVar`), so a committed file works in every checkout.
 */
export function defaultAgentBin(packageRoot: string, bundle: 'codex' | 'gemini', projectDir?: string, projectVar?: string) {
  if (!existsSync(join(packageRoot, 'dist', 'bundle', `${bundle}.cjs`))) return { bin: 'hookledger', machineSpecific: false };
  const claude = defaultHookledgerBin(packageRoot, projectVar ? projectDir : undefined);
  // Same package location as the Claude bundle, the agent's own bundle file beside it.
  const bin = claude.bin.replace(/claude\.cjs(["']?)$/, `${bundle}.cjs$1`);
  return {
    bin: projectVar ? bin.replaceAll('$CLAUDE_PROJECT_DIR', projectVar) : bin,
    machineSpecific: claude.machineSpecific || (projectDir !== undefined && !projectVar),
  };
}

/** The shell command an agent's handler runs: `BIN SUBCOMMAND --config PATH [--db PATH] [--on-error P]`. */
export function agentHookCommand(options: {
  bin: string;
  subcommand: 'codex' | 'gemini';
  configPath: string;
  dbPath?: string | undefined;
  onError?: 'deny' | 'allow' | undefined;
  projectDir?: string | undefined;
  /** The agent's variable for the project directory, used for paths inside it. */
  projectVar?: string | undefined;
  /** The central PostgreSQL to ship to after the agent's end-of-turn/session events (`--ship-to`), without its password. */
  shipTo?: string | undefined;
}): string {
  const path = (p: string) => {
    const { word } = projectPathWord(p, options.projectVar ? options.projectDir : undefined);
    return options.projectVar ? word.replaceAll('$CLAUDE_PROJECT_DIR', options.projectVar) : word;
  };
  const parts = [options.bin, options.subcommand, '--config', path(options.configPath)];
  if (options.dbPath) parts.push('--db', options.dbPath === ':memory:' ? ':memory:' : path(options.dbPath));
  if (options.onError) parts.push('--on-error', options.onError);
  if (options.shipTo) parts.push('--ship-to', shellWord(options.shipTo));
  return parts.join(' ');
}

/** True for a handler running `hookledger SUBCOMMAND` (or the agent's bundle). */
export function isHookledgerCommand(handler: AgentHandler, subcommand: 'codex' | 'gemini'): boolean {
  if (handler.type !== 'command' || typeof handler.command !== 'string') return false;
  return new RegExp(`(^|[\\s/"'])(hookledger(\\.js)?|${subcommand}\\.[cm]js)["']?\\s+${subcommand}(\\s|$)`).test(handler.command);
}
