import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import * as z from 'zod';
import { ConfigError, describeThrown } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import { resolveHookSet } from '../domain/hooks.js';
import { formatIssues } from '../domain/results.js';
import { oneLine } from '../domain/text.js';
import { MEERKAT_POINTS, pointForMeerkat } from './meerkat-input.js';

/**
 * meerkat's TOML configuration (reference/meerkat-wire.md, "How a meerkat user would put
 * hookledger in front of their agent"): turn its `[[hooks.entries]]` into a hook set
 * (import-meerkat), and write the entries that route meerkat's points to hookledger
 * (install-meerkat). The file is edited as text, entry by entry, so every other line,
 * comment and table stays byte for byte; smol-toml parses it to validate before and after.
 */

/** meerkat's default `[hooks] default_timeout_ms`. */
export const MEERKAT_DEFAULT_TIMEOUT_MS = 5000;

/** Where meerkat reads its configuration, in the order it layers the entries. */
export function meerkatConfigPaths(cwd: string, home: string): { user: string; project: string } {
  return { user: join(home, '.rkat', 'config.toml'), project: join(cwd, '.rkat', 'config.toml') };
}

const runtimeSchema = z.discriminatedUnion(
  'type',
  [
    z.looseObject({ type: z.literal('in_process'), handler: z.string().optional() }),
    z.looseObject({
      type: z.literal('command'),
      command: z.string().min(1, 'command must not be blank'),
      args: z.array(z.string()).optional(),
      env: z.record(z.string(), z.string()).optional(),
    }),
    z.looseObject({
      type: z.literal('http'),
      url: z.string(),
      method: z.string().optional(),
      headers: z.record(z.string(), z.string()).optional(),
    }),
  ],
  { error: 'runtime.type must be in_process, command or http' },
);

const entrySchema = z.looseObject({
  id: z.string({ error: 'id must be a string' }).min(1, 'id must not be blank'),
  enabled: z.boolean().optional(),
  point: z.string().optional(),
  mode: z.enum(['foreground', 'background']).optional(),
  capability: z.enum(['observe', 'guardrail']).optional(),
  priority: z.number().int().optional(),
  timeout_ms: z.number().int().positive().optional(),
  runtime: runtimeSchema,
});
export type MeerkatEntry = z.infer<typeof entrySchema>;

const configSchema = z.looseObject({
  hooks: z
    .looseObject({
      default_timeout_ms: z.number().int().positive().optional(),
      payload_max_bytes: z.number().int().positive().optional(),
      entries: z.array(z.unknown()).optional(),
    })
    .optional(),
});

/** Parses a meerkat config text; a TOML or shape error is one ConfigError line naming the file. */
export function parseMeerkatConfig(text: string, where: string): z.infer<typeof configSchema> {
  let value: unknown;
  try {
    value = parse(text);
  } catch (error) {
    throw new ConfigError(`${where}: not valid TOML (${oneLine(describeThrown(error))})`);
  }
  const parsed = configSchema.safeParse(value);
  if (!parsed.success) throw new ConfigError(`${where}: ${formatIssues(parsed.error)}`);
  return parsed.data;
}

/** An entry that routes to hookledger: `… hookledger meerkat …` (or the meerkat bundle), or an http entry on /meerkat. */
export function isHookledgerEntry(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null) return false;
  const runtime = (entry as { runtime?: unknown }).runtime as Record<string, unknown> | undefined;
  if (!runtime || typeof runtime !== 'object') return false;
  if (runtime.type === 'command') {
    const words = [runtime.command, ...(Array.isArray(runtime.args) ? runtime.args : [])].filter((w): w is string => typeof w === 'string');
    return words.some((w) => /(^|\/)(hookledger(\.js)?|meerkat\.[cm]js)$/.test(w)) && words.includes('meerkat');
  }
  if (runtime.type === 'http') return typeof runtime.url === 'string' && /\/(v1\/)?meerkat\/?$/.test(runtime.url);
  return false;
}

// ---------------------------------------------------------------------------------------
// import-meerkat
// ---------------------------------------------------------------------------------------

export interface MeerkatImportResult {
  definition: { name: string; version: string; strategy: 'deny_wins'; hooks: Record<string, unknown>[] };
  imported: { id: string; point: string; type: string; source: string }[];
  unsupported: { id: string; type: string; source: string; why: string }[];
  warnings: string[];
}

/**
 * Turns the `[[hooks.entries]]` of meerkat config files (in meerkat's layering order) into a
 * hook set: ids, points, priorities, modes, capabilities, timeouts and enabled flags kept;
 * command and http runtimes become command/http hooks speaking meerkat's protocol, so the
 * scripts run unchanged. `in_process` handlers live inside meerkat and are reported as not
 * importable; hookledger's own entries are skipped. The last file that sets `[hooks]
 * default_timeout_ms` gives the timeout of entries without one.
 */
export function importMeerkatConfig(files: { path: string; text: string }[], name = 'meerkat-config'): MeerkatImportResult {
  const configs = files.map((f) => ({ path: f.path, config: parseMeerkatConfig(f.text, f.path) }));
  const defaultTimeout = configs.reduce<number>((t, c) => c.config.hooks?.default_timeout_ms ?? t, MEERKAT_DEFAULT_TIMEOUT_MS);
  const result: MeerkatImportResult = {
    definition: { name, version: '1', strategy: 'deny_wins', hooks: [] },
    imported: [],
    unsupported: [],
    warnings: [],
  };
  const ids = new Set<string>();
  for (const { path, config } of configs) {
    for (const [index, raw] of (config.hooks?.entries ?? []).entries()) {
      const parsed = entrySchema.safeParse(raw);
      if (!parsed.success) throw new ConfigError(`${path}: hooks.entries[${index}]: ${formatIssues(parsed.error)}`);
      const entry = parsed.data;
      const type = entry.runtime.type;
      if (isHookledgerEntry(entry)) continue;
      const skip = (why: string) => result.unsupported.push({ id: entry.id, type, source: path, why });
      if (ids.has(entry.id)) {
        skip('duplicate id (meerkat rejects duplicates too); the first entry with this id was imported');
        continue;
      }
      if (entry.runtime.type === 'in_process') {
        skip(
          `in_process handler${entry.runtime.handler ? ` "${entry.runtime.handler}"` : ''} runs inside meerkat and cannot be imported; keep it in meerkat's config`,
        );
        continue;
      }
      const pointName = entry.point ?? 'turn_boundary';
      if (pointForMeerkat(pointName) === 'other') {
        skip(`point "${pointName}" is not a meerkat point hookledger knows (${MEERKAT_POINTS.join(', ')})`);
        continue;
      }
      ids.add(entry.id);
      const def: Record<string, unknown> = { id: entry.id, description: `imported from ${path}`, point: pointName };
      def.priority = entry.priority ?? 100;
      const mode = entry.mode ?? 'foreground';
      let capability = entry.capability ?? 'observe';
      if (mode === 'background' && capability === 'guardrail') {
        result.warnings.push(`${entry.id}: a background guardrail never decides in hookledger; imported as a background observer`);
        capability = 'observe';
      }
      def.mode = mode;
      def.capability = capability;
      def.timeoutMs = Math.min(entry.timeout_ms ?? defaultTimeout, 3_600_000);
      if (entry.enabled === false) def.enabled = false;
      if (entry.runtime.type === 'command') {
        const env = entry.runtime.env ?? {};
        def.command = {
          command: entry.runtime.command,
          args: entry.runtime.args ?? [],
          ...(Object.keys(env).length > 0 ? { env } : {}),
          protocol: 'meerkat',
        };
      } else {
        const method = (entry.runtime.method ?? 'POST').toUpperCase();
        if (method !== 'POST') result.warnings.push(`${entry.id}: http method ${method} becomes POST (hookledger posts the invocation)`);
        const headers = entry.runtime.headers ?? {};
        def.http = { url: entry.runtime.url, ...(Object.keys(headers).length > 0 ? { headers } : {}), protocol: 'meerkat' };
      }
      result.definition.hooks.push(def);
      result.imported.push({ id: entry.id, point: pointName, type, source: path });
    }
  }
  // The result must load: fail here, naming the hook, rather than at the agent's next run.
  resolveHookSet(result.definition, `import of ${files.map((f) => f.path).join(', ')}`);
  return result;
}

// ---------------------------------------------------------------------------------------
// install-meerkat
// ---------------------------------------------------------------------------------------

/** What each hookledger entry runs: a command (the bundle or the CLI), or the server's URL. */
export type MeerkatHandler =
  { type: 'command'; command: string; args: string[] } | { type: 'http'; url: string; headers: Record<string, string> };

export interface MeerkatInstallOptions {
  handler: MeerkatHandler;
  points: readonly string[];
  /** timeout_ms per meerkat point. */
  timeouts: Readonly<Record<string, number>>;
  /** Priority of hookledger's entries among the user's (lower runs first). */
  priority?: number;
}

export interface MeerkatInstallResult {
  text: string;
  changed: boolean;
  written: string[];
  removed: number;
  /** Entries that are not hookledger's, left in place. */
  others: number;
}

/** A `[[hooks.entries]]` block in the text: where it starts and ends (line indices), and whether it is hookledger's. */
interface EntryBlock {
  start: number;
  end: number;
  ours: boolean;
}

/** Default priority of hookledger's entries: early, so it records what later meerkat hooks see. */
export const INSTALL_PRIORITY = 10;

/**
 * Writes one hookledger entry per point into a meerkat config text. Idempotent byte for byte:
 * when the entries already there are exactly the wanted ones the text is returned as it was;
 * otherwise hookledger's old entries are cut out (each with the blank line before it) and
 * the new ones appended. Every other line, comment and table is kept.
 */
export function installMeerkatEntries(text: string, options: MeerkatInstallOptions, where: string): MeerkatInstallResult {
  parseMeerkatConfig(text, where);
  const lines = text.split('\n');
  const blocks = entryBlocks(lines, where);
  const ours = blocks.filter((b) => b.ours);
  const wanted = options.points.map((point) => entryText(point, options));
  const existing = ours.map((b) => lines.slice(b.start, b.end).join('\n'));
  const others = blocks.length - ours.length;
  if (existing.length === wanted.length && existing.every((e, i) => e === wanted[i])) {
    return { text, changed: false, written: [], removed: 0, others };
  }
  // Cut from the last block up, so earlier indices stay valid.
  const kept = [...lines];
  for (const block of [...ours].reverse()) {
    const from = block.start > 0 && kept[block.start - 1]!.trim() === '' ? block.start - 1 : block.start;
    kept.splice(from, block.end - from);
  }
  let next = kept.join('\n');
  if (wanted.length > 0) {
    if (next !== '' && !next.endsWith('\n')) next += '\n';
    // Each entry after a blank line (none at the very start of a file): exactly what the cut above removes.
    next += `${next === '' ? '' : '\n'}${wanted.join('\n\n')}\n`;
  }
  // The result must still be meerkat config (an inline `hooks.entries = [...]` array, say, cannot take a table).
  parseMeerkatConfig(next, `${where} (after the edit)`);
  return { text: next, changed: next !== text, written: [...options.points], removed: ours.length, others };
}

/** Finds each `[[hooks.entries]]` block: its header up to its last non-blank, non-comment line before the next other table. */
function entryBlocks(lines: string[], where: string): EntryBlock[] {
  const blocks: EntryBlock[] = [];
  const header = (line: string) => /^\s*\[/.test(line);
  for (let i = 0; i < lines.length; i += 1) {
    if (!/^\s*\[\[\s*hooks\s*\.\s*entries\s*\]\]/.test(lines[i]!)) continue;
    let j = i + 1;
    while (j < lines.length && !(header(lines[j]!) && !/^\s*\[\s*hooks\s*\.\s*entries\s*\./.test(lines[j]!))) j += 1;
    let end = j;
    while (end > i + 1 && /^\s*(#.*)?$/.test(lines[end - 1]!)) end -= 1;
    const blockText = lines.slice(i, end).join('\n');
    let entry: unknown;
    try {
      entry = (parse(blockText) as { hooks?: { entries?: unknown[] } }).hooks?.entries?.[0];
    } catch (error) {
      throw new ConfigError(
        `${where}: line ${i + 1}: the [[hooks.entries]] block does not parse on its own (${oneLine(describeThrown(error))})`,
      );
    }
    blocks.push({ start: i, end, ours: isHookledgerEntry(entry) });
    i = end - 1;
  }
  return blocks;
}

/** One hookledger entry as TOML, always written the same way so a second install finds it equal. */
function entryText(point: string, options: MeerkatInstallOptions): string {
  const entry = {
    id: `hookledger-${point}`,
    point,
    mode: 'foreground',
    capability: 'guardrail',
    priority: options.priority ?? INSTALL_PRIORITY,
    timeout_ms: options.timeouts[point] ?? MEERKAT_DEFAULT_TIMEOUT_MS,
  };
  const runtime =
    options.handler.type === 'command'
      ? { type: 'command', command: options.handler.command, args: options.handler.args }
      : { type: 'http', url: options.handler.url, headers: options.handler.headers };
  return ['[[hooks.entries]]', ...tomlLines(entry), '[hooks.entries.runtime]', ...tomlLines(runtime)].join('\n');
}

/** `key = value` lines, objects as inline tables: a sub-table header would leave the entry. */
function tomlLines(values: Record<string, unknown>): string[] {
  return Object.entries(values).map(([key, value]) => tomlLine(key, value));
}

function tomlLine(key: string, value: unknown): string {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const [name] = stringify({ [key]: 0 }).split(' = ');
    return `${name} = { ${tomlLines(value as Record<string, unknown>).join(', ')} }`;
  }
  return stringify({ [key]: value }).trim();
}

/**
 * `timeout_ms` for hookledger's entry at each point: the point's foreground hooks in a row,
 * the background drain when background hooks run there, and 2 s for start-up and recording;
 * never below meerkat's default. Without a hook set (http without --config), the default.
 */
export function meerkatTimeouts(hookSet: HookSet | null, points: readonly string[], backgroundDrainMs: number): Record<string, number> {
  const timeouts: Record<string, number> = {};
  for (const name of points) {
    const point = pointForMeerkat(name);
    const hooks = (hookSet?.hooks ?? []).filter((h) => h.enabled && h.points.includes(point));
    const foreground = hooks.filter((h) => h.mode === 'foreground').reduce((sum, h) => sum + h.timeoutMs, 0);
    const drain = hooks.some((h) => h.mode === 'background') ? backgroundDrainMs : 0;
    timeouts[name] = Math.max(MEERKAT_DEFAULT_TIMEOUT_MS, foreground + drain + 2000);
  }
  return timeouts;
}

/** Reads a config file; a missing one is empty. */
export function readMeerkatConfigText(path: string): { text: string; existed: boolean } {
  try {
    return { text: readFileSync(path, 'utf8'), existed: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { text: '', existed: false };
    throw new ConfigError(`${path}: cannot read: ${describeThrown(error)}`);
  }
}

/** Writes a config file atomically (a temp file renamed over it). */
export function writeMeerkatConfigText(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.hookledger-${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}
