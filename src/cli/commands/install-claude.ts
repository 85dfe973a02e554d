import { packageRoot } from '../../ledger/paths.js';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import {
  DEFAULT_INSTALL_EVENTS,
  defaultHookledgerBin,
  INSTALLABLE_EVENTS,
  OPT_IN_EVENTS,
  hookledgerCommand,
  installHookledger,
  readSettings,
  settingsPath,
  uninstallHookledger,
  writeSettings,
} from '../../adapters/claude-settings.js';
import { DEFAULT_BACKGROUND_DEADLINE_MS, resolveOnErrorPolicy } from '../../adapters/claude.js';
import { handlerTimeouts } from '../../adapters/claude-timeouts.js';
import { loadHookSet } from '../../config/load.js';
import { UsageError } from '../../domain/errors.js';
import type { HookSet } from '../../domain/hooks.js';
import { boolFlag, configOption, stringFlag, type Command } from '../command.js';
import { writeJson, writeReport } from '../io.js';
import { shipEventsWarning, shipTarget } from '../agent-install-flags.js';
import { SHIP_AFTER } from '../ship-after-hook.js';

export const command: Command = {
  summary: 'register hookledger as the Claude Code hook for each event (settings.json)',
  usage: `install-claude [--project|--user|--local|--settings FILE] --config PATH [--db PATH]
        [--events A,B] [--http URL] [--bin CMD] [--on-error deny|allow] [--ship URL] [--print] [--remove] [--json]

  Writes one handler per event (matcher "*") running \`hookledger claude --config PATH\`, or
  with --http URL an http handler for \`hookledger serve\` (token from $HOOKLEDGER_TOKEN).
  Every other key and handler in the file is kept; a second run changes nothing.
  Each handler gets a \`timeout\` (seconds) long enough for the event's foreground hooks in
  a row, the background drain and 2 s of margin, never below Claude Code's default
  (SessionEnd: at most 60); run install-claude again after changing hook timeouts.
  With --http, --config (the hook set serve runs) is optional and sizes the timeouts.
  --project   .claude/settings.json in the current directory (default); paths inside the
              project are written relative to $CLAUDE_PROJECT_DIR
  --user      ~/.claude/settings.json        --local  .claude/settings.local.json
  --events    default: every Claude Code event but ${[...OPT_IN_EVENTS].join(' and ')}, which
              replace or slow Claude Code and are installed only when named here
              (WorktreeCreate: the hook set must create the worktree and allow with its path)
  --bin       how Claude Code starts hookledger (default: node on this package's
              single-file claude bundle, dist/bundle/claude.cjs, when built, else
              "hookledger"; with --project and hookledger installed in the project,
              relative to $CLAUDE_PROJECT_DIR)
  --ship URL  after SessionEnd and Stop, ship this ledger to the central PostgreSQL at URL
              in a detached \`hookledger ship --background\` (one per ledger; docs/ship.md).
              Without the password (refused): PGPASSWORD or ~/.pgpass in Claude Code's
              environment, or the whole URL in HOOKLEDGER_SHIP_TO there instead of --ship
  --print     print the resulting settings instead of writing them
  --remove    remove hookledger's entries instead`,
  options: {
    ...configOption,
    db: { type: 'string' },
    json: { type: 'boolean' },
    project: { type: 'boolean' },
    user: { type: 'boolean' },
    local: { type: 'boolean' },
    settings: { type: 'string' },
    events: { type: 'string' },
    http: { type: 'string' },
    bin: { type: 'string' },
    'on-error': { type: 'string' },
    ship: { type: 'string' },
    print: { type: 'boolean' },
    remove: { type: 'boolean' },
  },
  async run(args, io) {
    const scopes = ['project', 'user', 'local'].filter((s) => boolFlag(args, s));
    if (scopes.length + (stringFlag(args, 'settings') ? 1 : 0) > 1)
      throw new UsageError('install-claude: give one of --project, --user, --local, --settings');
    const cwd = process.cwd();
    const home = io.env.HOME ?? homedir();
    const scope = (scopes[0] ?? 'project') as 'project' | 'user' | 'local';
    const file = stringFlag(args, 'settings') ? resolve(stringFlag(args, 'settings')!) : settingsPath(scope, cwd, home);
    const { settings } = readSettings(file);
    // Only .claude/settings.json is meant to be committed; --local, --user and --settings stay on this machine.
    const committed = scope === 'project' && !stringFlag(args, 'settings');
    const warnings: string[] = [];

    let result;
    if (boolFlag(args, 'remove')) {
      result = uninstallHookledger(settings, file);
    } else {
      const events = stringFlag(args, 'events')
        ?.split(',')
        .map((e) => e.trim())
        .filter((e) => e !== '');
      if (events !== undefined && events.length === 0) throw new UsageError('--events: name at least one Claude Code event');
      if (events !== undefined) checkEvents(events);
      const httpUrl = stringFlag(args, 'http');
      const configPath = stringFlag(args, 'config');
      let handler: { type: 'command'; command: string } | { type: 'http'; url: string };
      let hookSet: HookSet | null = null;
      const shipTo = shipTarget(stringFlag(args, 'ship'), { agent: 'Claude Code', httpUrl, dbPath: stringFlag(args, 'db') });
      if (httpUrl !== undefined) {
        if (!/^https?:\/\/[^/]+/.test(httpUrl)) throw new UsageError(`--http: "${httpUrl}" is not an http(s) URL`);
        handler = { type: 'http', url: /\/(v1\/)?claude\/?$/.test(httpUrl) ? httpUrl : `${httpUrl.replace(/\/+$/, '')}/claude` };
        if (configPath !== undefined) hookSet = await loadHookSet(configPath);
        else
          warnings.push(
            "--http without --config: handler timeouts are Claude Code's defaults (SessionEnd hooks get 2 s); pass the hook set serve runs with --config to size them",
          );
      } else {
        if (!configPath) throw new UsageError('install-claude: --config PATH is required (the hook set the Claude Code handler runs)');
        // Refuse to install a config that would make every event fail.
        hookSet = await loadHookSet(configPath);
        const onErrorFlag = stringFlag(args, 'on-error');
        if (onErrorFlag !== undefined) {
          const { problem } = resolveOnErrorPolicy(onErrorFlag, {});
          if (problem) throw new UsageError(problem);
        }
        let bin = stringFlag(args, 'bin');
        if (bin === undefined) {
          const fallback = defaultHookledgerBin(packageRoot, committed ? cwd : undefined);
          bin = fallback.bin;
          if (fallback.machineSpecific) {
            warnings.push(
              `${file} now holds a machine-specific path (${bin}) that fails in other checkouts; run \`npm install -D hookledger\` in the project and install again, or use --local or --bin`,
            );
          }
        }
        handler = {
          type: 'command',
          command: hookledgerCommand({
            bin,
            configPath,
            dbPath: stringFlag(args, 'db'),
            onError: onErrorFlag as 'deny' | 'allow' | undefined,
            shipTo,
            projectDir: scope === 'user' && !stringFlag(args, 'settings') ? undefined : cwd,
          }),
        };
      }
      const shipWarning = shipEventsWarning(shipTo, events, SHIP_AFTER.claude);
      if (shipWarning) warnings.push(shipWarning);
      if (events?.includes('WorktreeCreate') && hookSet !== null && !hookSet.hooks.some((h) => h.points.includes('worktree_create'))) {
        warnings.push(
          "WorktreeCreate: the hook set has no hook at worktree_create, so every worktree creation will fail (a WorktreeCreate hook replaces Claude Code's own creation and must answer the path)",
        );
      }
      // Command mode waits for background hooks after answering (the written command leaves
      // --background-deadline-ms at its default); serve runs them after the http response.
      const sized = handlerTimeouts(hookSet, events ?? DEFAULT_INSTALL_EVENTS, {
        backgroundDrainMs: handler.type === 'command' ? DEFAULT_BACKGROUND_DEADLINE_MS : 0,
      });
      warnings.push(...sized.warnings);
      result = installHookledger(settings, { handler, timeouts: sized.timeouts, ...(events ? { events } : {}) }, file);
    }

    const print = boolFlag(args, 'print');
    if (!print && result.changed) writeSettings(file, result.settings);
    for (const warning of warnings) io.stderr.write(`hookledger: warning: ${warning}\n`);
    if (boolFlag(args, 'json')) {
      writeJson(io, {
        file,
        written: !print && result.changed,
        changed: result.changed,
        events: result.written,
        removed: result.removed,
        skipped: result.skipped,
        otherHandlers: result.others,
        warnings,
        ...(print ? { settings: result.settings } : {}),
      });
      return 0;
    }
    if (print) {
      writeJson(io, result.settings);
      return 0;
    }
    const summary = !result.changed
      ? `${file}: already up to date`
      : `${file}: ${result.written.length > 0 ? `hookledger handles ${result.written.join(', ')}` : ''}${result.removed.length > 0 ? `${result.written.length > 0 ? '; ' : ''}removed from ${result.removed.join(', ')}` : ''}`;
    writeReport(io, summary);
    if (result.skipped.length > 0)
      writeReport(io, `not registered (Claude Code runs only command hooks there): ${result.skipped.join(', ')}`);
    if (result.others > 0 && !boolFlag(args, 'remove')) {
      writeReport(
        io,
        `${result.others} other hook handler(s) in this file still run beside hookledger; \`hookledger import-claude ${file}\` turns them into a hook set`,
      );
    }
    return 0;
  },
};

/**
 * Only events with a hookledger point: a typo would register a key Claude Code never fires
 * (and drop hookledger from the real events).
 */
function checkEvents(events: readonly string[]): void {
  for (const event of events) {
    if (INSTALLABLE_EVENTS.includes(event)) continue;
    const near = INSTALLABLE_EVENTS.find((e) => e.toLowerCase() === event.toLowerCase());
    throw new UsageError(
      `--events: "${event}" is not an event hookledger installs for${near ? ` (did you mean ${near}?)` : ''}; valid: ${INSTALLABLE_EVENTS.join(', ')}`,
    );
  }
}
