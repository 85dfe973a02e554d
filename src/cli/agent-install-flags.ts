import { resolve } from 'node:path';
import type { MergeResult } from '../adapters/agent-install.js';
import { resolveOnErrorPolicy } from '../adapters/claude.js';
import { loadHookSet } from '../config/load.js';
import { UsageError } from '../domain/errors.js';
import type { HookSet } from '../domain/hooks.js';
import { isPostgresUrl, passwordInFlag } from '../ledger/postgres/url.js';
import { boolFlag, configOption, stringFlag, type CommandArgs } from './command.js';
import { writeJson, writeReport, type CliIo } from './io.js';

/**
 * The flags install-codex and install-gemini share with install-claude (`--project`,
 * `--user`, `--config`, `--db`, `--events`, `--bin`, `--on-error`, `--print`, `--remove`,
 * `--json`), read and checked once.
 */
export const installOptions = {
  ...configOption,
  db: { type: 'string' },
  json: { type: 'boolean' },
  project: { type: 'boolean' },
  user: { type: 'boolean' },
  events: { type: 'string' },
  bin: { type: 'string' },
  'on-error': { type: 'string' },
  print: { type: 'boolean' },
  remove: { type: 'boolean' },
  ship: { type: 'string' },
} as const;

export interface InstallFlags {
  scope: 'project' | 'user';
  file: string | undefined;
  toml: boolean;
  events: string[];
  bin: string | undefined;
  print: boolean;
  remove: boolean;
  json: boolean;
  /** What to install; null with --remove. */
  install: {
    configPath: string;
    hookSet: HookSet;
    dbPath: string | undefined;
    onError: 'deny' | 'allow' | undefined;
    /** `--ship URL`: the hook starts the shipper after the agent's end-of-turn and end-of-session events. */
    shipTo: string | undefined;
  } | null;
}

export async function installFlags(
  args: CommandArgs,
  _io: CliIo,
  options: { name: string; events: { all: readonly string[]; defaults: readonly string[]; agent: string } },
): Promise<InstallFlags> {
  const scopes = ['project', 'user'].filter((s) => boolFlag(args, s));
  const file = stringFlag(args, 'file');
  if (scopes.length + (file ? 1 : 0) > 1) throw new UsageError(`${options.name}: give one of --project, --user, --file`);
  const remove = boolFlag(args, 'remove');
  const listed = stringFlag(args, 'events')
    ?.split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (listed !== undefined && listed.length === 0) throw new UsageError(`--events: name at least one ${options.events.agent} event`);
  for (const event of listed ?? []) {
    if (options.events.all.includes(event)) continue;
    const near = options.events.all.find((e) => e.toLowerCase() === event.toLowerCase());
    throw new UsageError(
      `--events: "${event}" is not a ${options.events.agent} event${near ? ` (did you mean ${near}?)` : ''}; valid: ${options.events.all.join(', ')}`,
    );
  }
  let install: InstallFlags['install'] = null;
  const configPath = stringFlag(args, 'config');
  if (!remove) {
    if (!configPath) throw new UsageError(`${options.name}: --config PATH is required (the hook set the handler runs)`);
    const onErrorFlag = stringFlag(args, 'on-error');
    if (onErrorFlag !== undefined) {
      const { problem } = resolveOnErrorPolicy(onErrorFlag, {});
      if (problem) throw new UsageError(problem);
    }
    // Refuse to install a config that would make every event fail.
    install = {
      configPath,
      hookSet: await loadHookSet(configPath),
      dbPath: stringFlag(args, 'db'),
      onError: onErrorFlag?.trim().toLowerCase() as 'deny' | 'allow' | undefined,
      shipTo: shipTarget(stringFlag(args, 'ship'), { agent: options.events.agent, dbPath: stringFlag(args, 'db') }),
    };
  }
  return {
    scope: (scopes[0] ?? 'project') as 'project' | 'user',
    file: file ? resolve(file) : undefined,
    toml: boolFlag(args, 'toml'),
    events: listed ?? [...options.events.defaults],
    bin: stringFlag(args, 'bin'),
    print: boolFlag(args, 'print'),
    remove,
    json: boolFlag(args, 'json'),
    install,
  };
}

/** Prints what an install did (or would do, with --print); exit 0. */
export function reportInstall(
  io: CliIo,
  r: {
    file: string;
    result: MergeResult & { text: string };
    print: boolean;
    json: boolean;
    warnings: string[];
    notes: string[];
    importCommand: string;
  },
): number {
  const { file, result } = r;
  for (const warning of r.warnings) io.stderr.write(`hookledger: warning: ${warning}\n`);
  if (r.json) {
    writeJson(io, {
      file,
      written: !r.print && result.changed,
      changed: result.changed,
      events: result.written,
      removed: result.removed,
      otherHandlers: result.others,
      warnings: r.warnings,
      notes: r.notes,
      ...(r.print ? { text: result.text } : {}),
    });
    return 0;
  }
  if (r.print) {
    io.stdout.write(result.text);
    return 0;
  }
  const parts = [
    result.written.length > 0 ? `hookledger handles ${result.written.join(', ')}` : '',
    result.removed.length > 0 ? `removed from ${result.removed.join(', ')}` : '',
  ].filter((p) => p !== '');
  writeReport(io, result.changed ? `${file}: ${parts.join('; ')}` : `${file}: already up to date`);
  for (const note of r.notes) writeReport(io, note);
  if (result.others > 0 && result.removed.length === 0) {
    writeReport(
      io,
      `${result.others} other hook handler(s) in this file still run beside hookledger; \`hookledger ${r.importCommand} ${file}\` turns them into a hook set`,
    );
  }
  return 0;
}

/**
 * `--ship URL`, checked: a PostgreSQL URL without its password (the agent's configuration and
 * the command line are readable by others; `ship --to` refuses a password for the same reason).
 */
export function shipTarget(
  url: string | undefined,
  where: { agent: string; httpUrl?: string | undefined; dbPath: string | undefined },
): string | undefined {
  if (url === undefined) return undefined;
  if (!isPostgresUrl(url))
    throw new UsageError(`--ship: must be a postgres:// or postgresql:// URL, not ${JSON.stringify(url.slice(0, 80))}`);
  const withPassword = passwordInFlag('--ship', url, { writtenTo: 'the settings file', agent: where.agent });
  if (withPassword) throw new UsageError(withPassword);
  if (where.httpUrl !== undefined)
    throw new UsageError(
      '--ship: with --http, give the target to `hookledger serve` instead (`serve --ship URL` or HOOKLEDGER_SHIP_TO in its environment): serve ships its ledger itself',
    );
  if (where.dbPath !== undefined && isPostgresUrl(where.dbPath))
    throw new UsageError('--ship: --db is already a PostgreSQL ledger; --ship copies a local SQLite ledger to one');
  return url;
}

/** A warning when --ship is given but --events installs none of the events the hook ships after. */
export function shipEventsWarning(
  shipTo: string | undefined,
  events: readonly string[] | undefined,
  shipAfter: ReadonlySet<string>,
): string | null {
  if (shipTo === undefined || events === undefined || events.some((e) => shipAfter.has(e))) return null;
  const names = [...shipAfter].join(' and ');
  return `--ship: shipping starts after ${names}, and --events installs neither, so nothing will ship`;
}
