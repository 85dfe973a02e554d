import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { agentHookCommand, defaultAgentBin, writeConfigText } from '../../adapters/agent-install.js';
import { DEFAULT_BACKGROUND_DEADLINE_MS } from '../../adapters/claude.js';
import { CODEX_INSTALL_EVENTS, codexConfigPath, codexTimeouts, installCodexJson, installCodexToml } from '../../adapters/codex-config.js';
import { CODEX_EVENT_POINTS } from '../../adapters/codex-input.js';
import { packageRoot } from '../../ledger/paths.js';
import { installFlags, installOptions, reportInstall, shipEventsWarning } from '../agent-install-flags.js';
import { SHIP_AFTER, SHIP_INSTALL_USAGE } from '../ship-after-hook.js';
import type { Command } from '../command.js';

export const CODEX_TRUST_NOTE =
  'Codex asks you to review and trust new or changed hooks once (it stores their hash): start codex and approve the hookledger entries, or they do not run';

export const command: Command = {
  summary: 'register hookledger as the Codex CLI hook for each event (.codex/hooks.json or config.toml)',
  usage: `install-codex [--project|--user] [--toml|--file PATH] --config PATH [--db PATH]
        [--events A,B] [--bin CMD] [--on-error deny|allow] [--ship URL] [--print] [--remove] [--json]

  Writes one handler per event (matcher "*") running \`hookledger codex --config PATH\` into
  .codex/hooks.json (default) or, with --toml, config.toml (a marked block at its end).
  Every other key, handler and comment is kept; a second run changes nothing. Each handler's
  \`timeout\` (seconds) covers the event's foreground hooks in a row, the background drain and
  2 s, never below Codex's 600. ${CODEX_TRUST_NOTE}.
  Codex runs command hooks only (no http hooks), so there is no --http.
  --project   .codex/ in the current directory (default; Codex loads it in trusted projects)
  --user      ~/.codex/
  --events    default: ${CODEX_INSTALL_EVENTS.join(',')}; allowed: ${Object.keys(CODEX_EVENT_POINTS).join(',')}
  --bin       how Codex starts hookledger (default: node on this package's codex bundle,
              dist/bundle/codex.cjs, when built, else "hookledger"); paths are absolute
${SHIP_INSTALL_USAGE(SHIP_AFTER.codex)}
  --print     print the resulting file instead of writing it
  --remove    remove hookledger's entries instead`,
  options: { ...installOptions, toml: { type: 'boolean' }, file: { type: 'string' } },
  async run(args, io) {
    const flags = await installFlags(args, io, {
      name: 'install-codex',
      events: { all: Object.keys(CODEX_EVENT_POINTS), defaults: CODEX_INSTALL_EVENTS, agent: 'Codex' },
    });
    const home = io.env.HOME ?? homedir();
    const file = flags.file ?? codexConfigPath(flags.scope, flags.toml ? 'toml' : 'json', process.cwd(), home);
    const toml = flags.toml || file.endsWith('.toml');
    const warnings: string[] = [];
    let install = null;
    if (flags.install) {
      const { configPath, hookSet, dbPath, onError, shipTo } = flags.install;
      const shipWarning = shipEventsWarning(shipTo, flags.events, SHIP_AFTER.codex);
      if (shipWarning) warnings.push(shipWarning);
      let bin = flags.bin;
      if (bin === undefined) {
        const fallback = defaultAgentBin(packageRoot, 'codex');
        bin = fallback.bin;
        if (flags.scope === 'project' && !flags.file && fallback.bin !== 'hookledger') {
          warnings.push(
            `${file} holds absolute paths (Codex has no project-directory variable); install again in other checkouts, or use --bin`,
          );
        }
      }
      install = {
        command: agentHookCommand({
          bin,
          subcommand: 'codex',
          configPath: resolve(configPath),
          dbPath: dbPath ? resolve(dbPath) : undefined,
          onError,
          shipTo,
        }),
        events: flags.events,
        timeouts: codexTimeouts(hookSet, flags.events, DEFAULT_BACKGROUND_DEADLINE_MS),
      };
    }
    const result = toml ? installCodexToml(file, install) : installCodexJson(file, install);
    if (!flags.print && result.changed) writeConfigText(file, result.text);
    return reportInstall(io, {
      file,
      result,
      print: flags.print,
      json: flags.json,
      warnings,
      notes: install && result.changed ? [CODEX_TRUST_NOTE] : [],
      importCommand: 'import-codex',
    });
  },
};
