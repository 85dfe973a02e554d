import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import * as z from 'zod';
import { ConfigError, describeThrown } from '../domain/errors.js';
import { compileMatcher, resolveHookSet } from '../domain/hooks.js';
import { CLAUDE_EVENT_POINTS, pointForClaudeEvent, TOOL_POINTS, type Point } from '../domain/points.js';
import { formatIssues } from '../domain/results.js';
import { oneLine } from '../domain/text.js';

/**
 * Claude Code settings files (reference/claude-code-hooks.md section 1): read, merge the
 * hookledger entries in (install-claude), and turn existing hooks into a hook set
 * (import-claude). Everything hookledger does not own is kept as it was.
 */

/** A settings file: only `hooks` is looked at; every other key is kept untouched. */
export type ClaudeSettings = Record<string, unknown>;

const handlerSchema = z.looseObject({
  type: z.string({ error: 'type must be a string (command, http, prompt, agent, mcp_tool)' }),
  command: z.string().optional(),
  args: z.array(z.string()).optional(),
  url: z.string().optional(),
  headers: z.record(z.string(), z.string()).optional(),
  timeout: z.number({ error: 'timeout must be a number of seconds' }).positive().optional(),
  if: z.string().optional(),
  async: z.boolean().optional(),
  asyncRewake: z.boolean().optional(),
  shell: z.string().optional(),
});
export type ClaudeHandler = z.infer<typeof handlerSchema>;

const groupSchema = z.looseObject({
  matcher: z.string().optional(),
  hooks: z.array(handlerSchema),
});
export type ClaudeMatcherGroup = z.infer<typeof groupSchema>;

const hooksSchema = z.record(z.string(), z.array(groupSchema));

/** Every Claude Code event hookledger has a point for: what `install-claude --events` accepts. */
export const INSTALLABLE_EVENTS: readonly string[] = Object.keys(CLAUDE_EVENT_POINTS);

/**
 * Events installed only when named in `--events`: a WorktreeCreate hook replaces Claude Code's
 * own worktree creation (the hook set must make the worktree and answer its path), and
 * MessageDisplay fires for every batch of streamed text, a process per batch for a display rewrite.
 */
export const OPT_IN_EVENTS: ReadonlySet<string> = new Set(['WorktreeCreate', 'MessageDisplay']);

/** Events `install-claude` registers by default: every installable event but the opt-in ones. */
export const DEFAULT_INSTALL_EVENTS: readonly string[] = INSTALLABLE_EVENTS.filter((e) => !OPT_IN_EVENTS.has(e));

/** Claude Code refuses `http` handlers on these events (section 1, "Which types each event accepts"). */
const COMMAND_ONLY_EVENTS: ReadonlySet<string> = new Set(['SessionStart', 'Setup']);

/** Where a settings scope lives. */
export function settingsPath(scope: 'project' | 'user' | 'local', cwd: string, home: string): string {
  if (scope === 'user') return join(home, '.claude', 'settings.json');
  return join(cwd, '.claude', scope === 'local' ? 'settings.local.json' : 'settings.json');
}

/** Reads a settings file; a missing file is an empty one. */
export function readSettings(path: string): { settings: ClaudeSettings; existed: boolean } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { settings: {}, existed: false };
    throw new ConfigError(`${path}: cannot read: ${describeThrown(error)}`);
  }
  if (text.trim() === '') return { settings: {}, existed: true };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid JSON (${describeThrown(error)}); fix it before hookledger edits it`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new ConfigError(`${path}: expected a JSON object`);
  return { settings: json as ClaudeSettings, existed: true };
}

/** The `hooks` section, validated (unknown keys kept). */
export function settingsHooks(settings: ClaudeSettings, where: string): Record<string, ClaudeMatcherGroup[]> {
  if (settings.hooks === undefined) return {};
  const parsed = hooksSchema.safeParse(settings.hooks);
  if (!parsed.success) throw new ConfigError(`${where}: hooks.${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** Writes a settings file atomically (a temp file renamed over it), 2-space indented like Claude Code's own. */
export function writeSettings(path: string, settings: ClaudeSettings): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.hookledger-${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(settings, null, 2)}\n`);
  renameSync(temp, path);
}

/** Quotes a word for `sh -c` when it needs it; `$CLAUDE_PROJECT_DIR` stays expandable. */
export function shellWord(word: string): string {
  if (/^[A-Za-z0-9_./:=@%+,-]+$/.test(word)) return word;
  if (word.startsWith('$CLAUDE_PROJECT_DIR') && !/["\\`]/.test(word.slice('$CLAUDE_PROJECT_DIR'.length))) {
    return `"${word.replaceAll('$', '\\$').replace('\\$CLAUDE_PROJECT_DIR', '$CLAUDE_PROJECT_DIR')}"`;
  }
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

export interface HookledgerCommandOptions {
  /** How to start hookledger, e.g. `hookledger` or `node /opt/hookledger/bin/hookledger.js`. */
  bin: string;
  configPath: string;
  dbPath?: string | undefined;
  onError?: 'deny' | 'allow' | undefined;
  /** The central PostgreSQL to ship to after SessionEnd/Stop (`--ship-to`), without its password. */
  shipTo?: string | undefined;
  /**
   * With a project directory, paths inside it are written relative to `$CLAUDE_PROJECT_DIR`
   * so the settings file can be committed and works in every checkout.
   */
  projectDir?: string | undefined;
}

/**
 * A path as a shell word for a settings file: `"$CLAUDE_PROJECT_DIR/…"` when it lies inside
 * `projectDir` (so a committed file works in every checkout), else absolute. `relative`
 * says which, so a caller can warn about a machine-specific path.
 */
export function projectPathWord(path: string, projectDir: string | undefined): { word: string; relative: boolean } {
  const absolute = resolve(path);
  if (projectDir) {
    const rel = relative(resolve(projectDir), absolute);
    if (rel !== '' && !rel.startsWith('..') && !isAbsolute(rel)) {
      return { word: shellWord(`$CLAUDE_PROJECT_DIR/${rel.split(sep).join('/')}`), relative: true };
    }
  }
  return { word: shellWord(absolute), relative: false };
}

/** The shell command the handler runs. */
export function hookledgerCommand(options: HookledgerCommandOptions): string {
  const path = (p: string) => projectPathWord(p, options.projectDir).word;
  const parts = [options.bin, 'claude', '--config', path(options.configPath)];
  if (options.dbPath) parts.push('--db', options.dbPath === ':memory:' ? ':memory:' : path(options.dbPath));
  if (options.onError) parts.push('--on-error', options.onError);
  if (options.shipTo) parts.push('--ship-to', shellWord(options.shipTo));
  return parts.join(' ');
}

/** The default launcher, and whether it only works on this machine. */
export interface DefaultBin {
  bin: string;
  /** An absolute path outside the project: wrong in any other checkout of a committed file. */
  machineSpecific: boolean;
}

/**
 * How Claude Code starts hookledger unless `--bin` says otherwise: node on the single-file
 * `claude` bundle of the package at `packageRoot` (it starts about 1.7x faster than the
 * CLI), else `hookledger` from PATH when the bundle was not built. With a `projectDir` (a
 * settings file meant to be committed) a package installed in the project is written
 * relative to `$CLAUDE_PROJECT_DIR`: an absolute path would make node exit 1 in another
 * checkout, which Claude Code treats as a non-blocking error, so every guardrail would
 * silently fail open. `node_modules/hookledger` is preferred when it leads to this package
 * (pnpm's store path or an `npm link` target would not exist elsewhere).
 */
export function defaultHookledgerBin(packageRoot: string, projectDir?: string): DefaultBin {
  const bundle = join('dist', 'bundle', 'claude.cjs');
  if (!existsSync(join(packageRoot, bundle))) return { bin: 'hookledger', machineSpecific: false };
  let root = packageRoot;
  if (projectDir) {
    const installed = join(resolve(projectDir), 'node_modules', 'hookledger');
    if (sameFile(installed, packageRoot)) root = installed;
  }
  const { word, relative: inProject } = projectPathWord(join(root, bundle), projectDir);
  return { bin: `node ${word}`, machineSpecific: projectDir !== undefined && !inProject };
}

function sameFile(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
}

/** A handler hookledger wrote: a `hookledger … claude` command, or an http handler on a hookledger /claude URL. */
export function isHookledgerHandler(handler: ClaudeHandler): boolean {
  if (handler.type === 'command' && typeof handler.command === 'string') {
    // `hookledger claude`, `bin/hookledger.js claude`, or the bundle: `dist/bundle/claude.cjs claude` (`claude.mjs` before).
    return /(^|[\s/"'])(hookledger(\.js)?|claude\.[cm]js)["']?\s+claude(\s|$)/.test(handler.command);
  }
  if (handler.type === 'http' && typeof handler.url === 'string') {
    return /\/(v1\/)?claude\/?$/.test(handler.url) && JSON.stringify(handler.headers ?? {}).includes('HOOKLEDGER_TOKEN');
  }
  return false;
}

export interface InstallOptions {
  /** The handler to register: a command (command mode) or an http URL (server mode). */
  handler: { type: 'command'; command: string } | { type: 'http'; url: string };
  events?: readonly string[];
  /**
   * The `timeout` (seconds) to write on the handler, per event (see `handlerTimeouts`). An
   * event not listed gets no `timeout`; a changed value rewrites the entry.
   */
  timeouts?: Readonly<Record<string, number>>;
}

export interface InstallResult {
  settings: ClaudeSettings;
  changed: boolean;
  /** Events whose hookledger entry was added or rewritten. */
  written: string[];
  /** Events hookledger no longer handles, whose old entry was removed. */
  removed: string[];
  /** Events where http was asked for but Claude Code only runs commands; left out. */
  skipped: string[];
  /** Handlers that are not hookledger's, left in place (they still run, beside hookledger). */
  others: number;
}

/**
 * Merges one hookledger handler per event (matcher `*`) into the settings. Idempotent: an
 * event that already has exactly this handler is left as it is. Other handlers and every
 * other key are kept; an older hookledger entry (another config, db or URL) is replaced.
 */
export function installHookledger(settings: ClaudeSettings, options: InstallOptions, where = 'settings'): InstallResult {
  const hooks = structuredClone(settingsHooks(settings, where));
  const events = [...new Set(options.events ?? DEFAULT_INSTALL_EVENTS)];
  const base: ClaudeHandler =
    options.handler.type === 'command'
      ? { type: 'command', command: options.handler.command }
      : {
          type: 'http',
          url: options.handler.url,
          headers: { Authorization: 'Bearer $HOOKLEDGER_TOKEN' },
          allowedEnvVars: ['HOOKLEDGER_TOKEN'],
        };
  const desiredFor = (event: string): ClaudeHandler => {
    const timeout = options.timeouts?.[event];
    return timeout === undefined ? base : { ...base, timeout };
  };
  const written: string[] = [];
  const removed: string[] = [];
  const skipped: string[] = [];
  let others = 0;

  const wanted = new Set(events.filter((e) => !(base.type === 'http' && COMMAND_ONLY_EVENTS.has(e))));
  for (const e of events) if (!wanted.has(e)) skipped.push(e);

  for (const event of new Set([...Object.keys(hooks), ...wanted])) {
    const groups = hooks[event] ?? [];
    const ours = groups.flatMap((g) => g.hooks.filter(isHookledgerHandler).map((h) => ({ group: g, handler: h })));
    others += groups.reduce((n, g) => n + g.hooks.filter((h) => !isHookledgerHandler(h)).length, 0);
    const upToDate =
      wanted.has(event) &&
      ours.length === 1 &&
      (ours[0]!.group.matcher ?? '*') === '*' &&
      JSON.stringify(ours[0]!.handler) === JSON.stringify(desiredFor(event));
    if (upToDate || (ours.length === 0 && !wanted.has(event))) continue;
    const kept = groups.map((g) => ({ ...g, hooks: g.hooks.filter((h) => !isHookledgerHandler(h)) })).filter((g) => g.hooks.length > 0);
    if (wanted.has(event)) {
      kept.push({ matcher: '*', hooks: [desiredFor(event)] });
      written.push(event);
    } else {
      removed.push(event);
    }
    if (kept.length > 0) hooks[event] = kept;
    else delete hooks[event];
  }
  const changed = written.length > 0 || removed.length > 0;
  return { settings: changed ? { ...settings, hooks } : settings, changed, written, removed, skipped, others };
}

/** Removes every hookledger handler (install-claude --remove). */
export function uninstallHookledger(settings: ClaudeSettings, where = 'settings'): InstallResult {
  return installHookledger(settings, { handler: { type: 'command', command: '' }, events: [] }, where);
}

// ---------------------------------------------------------------------------------------
// import-claude: existing hooks → a hook set
// ---------------------------------------------------------------------------------------

/** Timeout given to an imported hook that had none (Claude Code would wait 600 s). */
export const IMPORT_DEFAULT_TIMEOUT_MS = 60_000;

export interface ImportedHook {
  id: string;
  event: string;
  matcher: string | null;
  type: string;
}

export interface UnsupportedHandler {
  event: string;
  matcher: string | null;
  type: string;
  /** The command, URL or prompt, shortened, so the user can find it. */
  what: string;
  why: string;
}

export interface ImportResult {
  /** A JSON hook-set file (docs/design.md §8), validated. */
  definition: { name: string; version: string; strategy: 'deny_wins'; hooks: Record<string, unknown>[] };
  imported: ImportedHook[];
  unsupported: UnsupportedHandler[];
  /** Things that changed meaning in the import (dropped `if`, matchers on non-tool events ...). */
  warnings: string[];
}

export interface ImportOptions {
  /** Hook set name; default `claude-settings`. */
  name?: string;
  /** onFailure of the imported guardrails; default deny (Claude Code itself fails open). */
  onFailure?: 'deny' | 'allow';
  /** Where the settings came from, for descriptions and messages. */
  source: string;
  /**
   * Another agent whose configuration has Claude Code's shape (import-codex, import-gemini):
   * its name in messages, its event → point mapping, its timeout unit, and how to recognise
   * hookledger's own entries there. Default: Claude Code.
   */
  agent?: {
    label: string;
    pointFor: (event: string) => Point;
    timeoutUnitMs: number;
    isHookledger: (handler: ClaudeHandler) => boolean;
  };
}

/**
 * Turns the hooks of a settings file into a hook set: each command handler becomes a
 * `command` hook (exec form when it has `args`), each http handler an `http` hook, with its
 * matcher, its timeout converted from seconds, as a foreground guardrail (async handlers
 * become background observers). Order in the file becomes registration order, so the hooks
 * run one by one in a defined order. prompt, agent and mcp_tool handlers, and events with no
 * hookledger point, are reported in `unsupported`, never dropped silently. hookledger's own
 * entries are skipped.
 */
export function importClaudeHooks(settings: ClaudeSettings, options: ImportOptions): ImportResult {
  const hooks = settingsHooks(settings, options.source);
  const onFailure = options.onFailure ?? 'deny';
  const agent = options.agent ?? {
    label: 'Claude Code',
    pointFor: pointForClaudeEvent,
    timeoutUnitMs: 1000,
    isHookledger: isHookledgerHandler,
  };
  const defs: Record<string, unknown>[] = [];
  const imported: ImportedHook[] = [];
  const unsupported: UnsupportedHandler[] = [];
  const warnings: string[] = [];
  const ids = new Set<string>();

  for (const [event, groups] of Object.entries(hooks)) {
    const point = agent.pointFor(event);
    for (const group of groups) {
      const matcher = group.matcher === undefined || group.matcher.trim() === '' || group.matcher.trim() === '*' ? null : group.matcher;
      for (const handler of group.hooks) {
        const what = describeHandler(handler);
        const report = (why: string) => unsupported.push({ event, matcher, type: handler.type, what, why });
        if (agent.isHookledger(handler)) continue;
        if (point === 'other') {
          report(`event ${event} has no hookledger point yet; keep this handler in ${agent.label}'s settings`);
          continue;
        }
        if (handler.type !== 'command' && handler.type !== 'http') {
          report(
            `${handler.type} handlers are not supported (hookledger runs command and http hooks); keep it in ${agent.label}'s settings`,
          );
          continue;
        }
        if (handler.type === 'command' && (typeof handler.command !== 'string' || handler.command.trim() === '')) {
          report('command handler without a command');
          continue;
        }
        if (handler.type === 'http' && (typeof handler.url !== 'string' || !/^https?:\/\//.test(handler.url))) {
          report('http handler without an http(s) url');
          continue;
        }
        if (handler.type === 'command' && handler.shell === 'powershell' && handler.args === undefined) {
          report('PowerShell hooks are not supported (hookledger runs shell commands with /bin/sh)');
          continue;
        }

        const id = uniqueId(baseId(handler, event), event, ids);
        const background = handler.async === true || handler.asyncRewake === true;
        const def: Record<string, unknown> = {
          id,
          description: `imported from ${options.source}: ${event}${matcher ? ` matcher "${matcher}"` : ''}`,
          point,
        };
        if (matcher !== null) {
          if (TOOL_POINTS.has(point)) {
            try {
              compileMatcher(matcher);
            } catch (error) {
              ids.delete(id);
              report(`matcher "${matcher}" is not a valid regular expression (${describeThrown(error)})`);
              continue;
            }
            def.match = matcher;
          } else {
            warnings.push(
              `${id}: matcher "${matcher}" on ${event} dropped (hookledger matches tool names only); the hook now runs on every ${event}`,
            );
          }
        }
        if (handler.if !== undefined) {
          warnings.push(
            `${id}: "if": "${handler.if}" dropped (permission-rule conditions are not supported); the hook runs for every matching call`,
          );
        }
        if (handler.asyncRewake === true) warnings.push(`${id}: asyncRewake imported as a plain background hook (it cannot wake Claude)`);
        if (background) {
          def.mode = 'background';
          def.capability = 'observe';
        } else {
          def.mode = 'foreground';
          def.capability = 'guardrail';
          def.onFailure = onFailure;
        }
        def.timeoutMs =
          handler.timeout !== undefined
            ? Math.min(Math.round(handler.timeout * agent.timeoutUnitMs), 3_600_000)
            : IMPORT_DEFAULT_TIMEOUT_MS;
        if (handler.type === 'command') {
          def.command = handler.args !== undefined ? { command: handler.command, args: handler.args } : handler.command;
        } else {
          const headers = handler.headers ?? {};
          if (Object.values(headers).some((v) => v.includes('$'))) {
            warnings.push(
              `${id}: header values with $VAR are sent literally (hookledger does not interpolate them); put the value in the hook set`,
            );
          }
          def.http = Object.keys(headers).length > 0 ? { url: handler.url, headers } : handler.url;
        }
        defs.push(def);
        imported.push({ id, event, matcher, type: handler.type });
      }
    }
  }

  const definition = { name: options.name ?? 'claude-settings', version: '1', strategy: 'deny_wins' as const, hooks: defs };
  // The result must load: fail here, naming the hook, rather than in the user's next session.
  resolveHookSet(definition, `import of ${options.source}`);
  return { definition, imported, unsupported, warnings };
}

function describeHandler(handler: ClaudeHandler): string {
  const text =
    handler.type === 'command'
      ? [handler.command ?? '', ...(handler.args ?? [])].join(' ')
      : handler.type === 'http'
        ? (handler.url ?? '')
        : String((handler as Record<string, unknown>).prompt ?? (handler as Record<string, unknown>).tool ?? '');
  const line = oneLine(text);
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** A readable id from the script's file name (`.claude/hooks/block_rm.py` → `block-rm`), or the URL's path. */
function baseId(handler: ClaudeHandler, event: string): string {
  const words =
    handler.type === 'http'
      ? [new URL(handler.url!).pathname]
      : [...(handler.args ?? []).slice().reverse(), ...(handler.command ?? '').split(/\s+/).reverse()];
  for (const word of words) {
    const file = word.replace(/["']/g, '').split('/').pop() ?? '';
    const stem = file.replace(/\.[A-Za-z0-9]+$/, '');
    const slug = stem
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .toLowerCase();
    if (
      slug !== '' &&
      !['python', 'python3', 'node', 'bash', 'sh', 'npx', 'uv', 'run', 'bun', 'deno'].includes(slug) &&
      !slug.startsWith('-')
    )
      return slug;
  }
  return kebab(event);
}

function uniqueId(base: string, event: string, ids: Set<string>): string {
  let id = ids.has(base) ? `${base}-${kebab(event)}` : base;
  for (let n = 2; ids.has(id); n += 1) id = `${base}-${kebab(event)}-${n}`;
  ids.add(id);
  return id;
}

function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase();
}
