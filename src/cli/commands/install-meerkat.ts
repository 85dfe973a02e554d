import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_BACKGROUND_DEADLINE_MS } from '../../adapters/claude.js';
import {
  installMeerkatEntries,
  meerkatConfigPaths,
  meerkatTimeouts,
  readMeerkatConfigText,
  writeMeerkatConfigText,
  type MeerkatHandler,
} from '../../adapters/meerkat-config.js';
import { MEERKAT_POINTS } from '../../adapters/meerkat-input.js';
import { loadHookSet } from '../../config/load.js';
import { UsageError } from '../../domain/errors.js';
import type { HookSet } from '../../domain/hooks.js';
import { packageRoot } from '../../ledger/paths.js';
import { boolFlag, configOption, stringFlag, type Command } from '../command.js';
import { writeJson, writeReport } from '../io.js';
import { shipEventsWarning, shipTarget } from '../agent-install-flags.js';
import { SHIP_AFTER, SHIP_INSTALL_USAGE } from '../ship-after-hook.js';

export const command: Command = {
  summary: "register hookledger as meerkat's hook for each point (.rkat/config.toml)",
  usage: `install-meerkat [--project|--user|--file FILE] --config PATH [--db PATH] [--points A,B]
        [--http URL --token TOKEN] [--bin CMD] [--on-error deny|allow] [--ship URL] [--print] [--remove] [--json]

  Writes one [[hooks.entries]] entry per point (id hookledger-<point>, foreground guardrail,
  priority 10) running \`hookledger meerkat --config PATH\`, or with --http an http entry
  for \`hookledger serve\`'s POST /meerkat. meerkat expands no variables, so paths are
  absolute and the token is written literally. Every other line, comment and table of the
  file is kept; a second run changes nothing, byte for byte. timeout_ms is sized from the
  hook set: the point's foreground hooks in a row, the background drain and 2 s, at least
  meerkat's 5000; run install-meerkat again after changing hook timeouts.
  --project   .rkat/config.toml in the current directory (default)
  --user      ~/.rkat/config.toml        --file  any meerkat config file
  --points    default: ${MEERKAT_POINTS.join(',')}
  --bin       how meerkat starts hookledger (default: node on this package's single-file
              meerkat bundle, dist/bundle/meerkat.cjs, when built, else "hookledger")
${SHIP_INSTALL_USAGE(SHIP_AFTER.meerkat)}
  --print     print the resulting file instead of writing it
  --remove    remove hookledger's entries instead`,
  options: {
    ...configOption,
    db: { type: 'string' },
    json: { type: 'boolean' },
    project: { type: 'boolean' },
    user: { type: 'boolean' },
    file: { type: 'string' },
    points: { type: 'string' },
    http: { type: 'string' },
    token: { type: 'string' },
    bin: { type: 'string' },
    'on-error': { type: 'string' },
    print: { type: 'boolean' },
    remove: { type: 'boolean' },
    ship: { type: 'string' },
  },
  async run(args, io) {
    const scopes = ['project', 'user'].filter((s) => boolFlag(args, s));
    if (scopes.length + (stringFlag(args, 'file') ? 1 : 0) > 1)
      throw new UsageError('install-meerkat: give one of --project, --user, --file');
    const paths = meerkatConfigPaths(process.cwd(), io.env.HOME ?? homedir());
    const file = stringFlag(args, 'file') ? resolve(stringFlag(args, 'file')!) : scopes[0] === 'user' ? paths.user : paths.project;
    const { text } = readMeerkatConfigText(file);

    let points: string[] = [];
    let handler: MeerkatHandler = { type: 'command', command: 'hookledger', args: [] };
    let hookSet: HookSet | null = null;
    if (!boolFlag(args, 'remove')) {
      points = parsePoints(stringFlag(args, 'points'));
      const configPath = stringFlag(args, 'config');
      const httpUrl = stringFlag(args, 'http');
      const shipTo = shipTarget(stringFlag(args, 'ship'), { agent: 'meerkat', httpUrl, dbPath: stringFlag(args, 'db') });
      const shipWarning = shipEventsWarning(shipTo, points, SHIP_AFTER.meerkat);
      if (shipWarning) io.stderr.write(`hookledger: warning: ${shipWarning}\n`);
      if (httpUrl !== undefined) {
        if (!/^https?:\/\/[^/]+/.test(httpUrl)) throw new UsageError(`--http: "${httpUrl}" is not an http(s) URL`);
        const token = stringFlag(args, 'token') ?? io.env.HOOKLEDGER_TOKEN;
        if (!token) throw new UsageError('--http: give --token (or set HOOKLEDGER_TOKEN): meerkat sends header values literally');
        const url = /\/(v1\/)?meerkat\/?$/.test(httpUrl) ? httpUrl : `${httpUrl.replace(/\/+$/, '')}/meerkat`;
        handler = { type: 'http', url, headers: { Authorization: `Bearer ${token}` } };
        if (configPath !== undefined) hookSet = await loadHookSet(configPath);
      } else {
        if (!configPath) throw new UsageError('install-meerkat: --config PATH is required (the hook set the meerkat entries run)');
        // Refuse to install a config that would make every invocation fail.
        hookSet = await loadHookSet(configPath);
        const onError = stringFlag(args, 'on-error');
        if (onError !== undefined && onError !== 'deny' && onError !== 'allow')
          throw new UsageError(`--on-error: "${onError}" is not deny or allow`);
        const bin = stringFlag(args, 'bin');
        const [command, ...binArgs] = bin !== undefined ? bin.split(/\s+/).filter((w) => w !== '') : defaultBin();
        if (command === undefined) throw new UsageError('--bin: give the command that starts hookledger');
        const db = stringFlag(args, 'db');
        handler = {
          type: 'command',
          command,
          args: [
            ...binArgs,
            'meerkat',
            '--config',
            resolve(configPath),
            ...(db ? ['--db', db === ':memory:' ? db : resolve(db)] : []),
            ...(onError ? ['--on-error', onError] : []),
            ...(shipTo ? ['--ship-to', shipTo] : []),
          ],
        };
      }
    }
    const timeouts = meerkatTimeouts(hookSet, points, handler.type === 'command' ? DEFAULT_BACKGROUND_DEADLINE_MS : 0);
    const result = installMeerkatEntries(text, { handler, points, timeouts }, file);

    const print = boolFlag(args, 'print');
    if (!print && result.changed) writeMeerkatConfigText(file, result.text);
    if (boolFlag(args, 'json')) {
      writeJson(io, {
        file,
        written: !print && result.changed,
        changed: result.changed,
        points: result.written,
        removed: result.removed,
        otherEntries: result.others,
        ...(print ? { text: result.text } : {}),
      });
      return 0;
    }
    if (print) {
      io.stdout.write(result.text);
      return 0;
    }
    writeReport(
      io,
      !result.changed
        ? `${file}: already up to date`
        : points.length > 0
          ? `${file}: hookledger handles ${points.join(', ')}`
          : `${file}: removed ${result.removed} hookledger entr${result.removed === 1 ? 'y' : 'ies'}`,
    );
    if (result.others > 0 && points.length > 0) {
      writeReport(
        io,
        `${result.others} other meerkat hook entr${result.others === 1 ? 'y' : 'ies'} still run beside hookledger; \`hookledger import-meerkat ${file}\` turns them into a hook set`,
      );
    }
    return 0;
  },
};

function parsePoints(value: string | undefined): string[] {
  if (value === undefined) return [...MEERKAT_POINTS];
  const points = [
    ...new Set(
      value
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== ''),
    ),
  ];
  if (points.length === 0) throw new UsageError('--points: name at least one meerkat point');
  for (const point of points) {
    if (!(MEERKAT_POINTS as readonly string[]).includes(point)) {
      throw new UsageError(`--points: "${point}" is not a meerkat point; valid: ${MEERKAT_POINTS.join(', ')}`);
    }
  }
  return points;
}

/** node on the single-file meerkat bundle when it was built (it starts faster), else the CLI from PATH. */
function defaultBin(): string[] {
  const bundle = join(packageRoot, 'dist', 'bundle', 'meerkat.cjs');
  return existsSync(bundle) ? ['node', bundle] : ['hookledger'];
}
