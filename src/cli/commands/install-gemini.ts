import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { agentHookCommand, defaultAgentBin, writeConfigText } from '../../adapters/agent-install.js';
import { DEFAULT_BACKGROUND_DEADLINE_MS } from '../../adapters/claude.js';
import { GEMINI_EVENT_POINTS } from '../../adapters/gemini-input.js';
import { GEMINI_INSTALL_EVENTS, geminiSettingsPath, geminiTimeouts, installGemini } from '../../adapters/gemini-settings.js';
import { packageRoot } from '../../ledger/paths.js';
import { installFlags, installOptions, reportInstall, shipEventsWarning } from '../agent-install-flags.js';
import { SHIP_AFTER, SHIP_INSTALL_USAGE } from '../ship-after-hook.js';
import type { Command } from '../command.js';

export const command: Command = {
  summary: 'register hookledger as the Gemini CLI hook for each event (.gemini/settings.json)',
  usage: `install-gemini [--project|--user|--file PATH] --config PATH [--db PATH]
        [--events A,B] [--bin CMD] [--on-error deny|allow] [--ship URL] [--print] [--remove] [--json]

  Writes one handler per event (matcher "*", name "hookledger") running
  \`hookledger gemini --config PATH\` into the \`hooks\` of .gemini/settings.json. Every other
  key and comment is kept; a second run changes nothing. Each handler's \`timeout\`
  (milliseconds) covers the event's foreground hooks in a row, the background drain and
  2 s, never below Gemini's 60000. Gemini CLI warns before running changed project hooks.
  Gemini CLI runs command hooks only (no http hooks), so there is no --http.
  --project   .gemini/settings.json in the current directory (default); paths inside the
              project are written relative to $GEMINI_PROJECT_DIR
  --user      ~/.gemini/settings.json
  --events    default: ${GEMINI_INSTALL_EVENTS.join(',')}; allowed: ${Object.keys(GEMINI_EVENT_POINTS).join(',')}
  --bin       how Gemini CLI starts hookledger (default: node on this package's gemini
              bundle, dist/bundle/gemini.cjs, when built, else "hookledger")
${SHIP_INSTALL_USAGE(SHIP_AFTER.gemini)}
  --print     print the resulting settings instead of writing them
  --remove    remove hookledger's entries instead`,
  options: { ...installOptions, file: { type: 'string' } },
  async run(args, io) {
    const flags = await installFlags(args, io, {
      name: 'install-gemini',
      events: { all: Object.keys(GEMINI_EVENT_POINTS), defaults: GEMINI_INSTALL_EVENTS, agent: 'Gemini CLI' },
    });
    const cwd = process.cwd();
    const file = flags.file ?? geminiSettingsPath(flags.scope, cwd, io.env.HOME ?? homedir());
    const committed = flags.scope === 'project' && !flags.file;
    const projectVar = committed ? '$GEMINI_PROJECT_DIR' : undefined;
    const warnings: string[] = [];
    let install = null;
    if (flags.install) {
      const { configPath, hookSet, dbPath, onError, shipTo } = flags.install;
      const shipWarning = shipEventsWarning(shipTo, flags.events, SHIP_AFTER.gemini);
      if (shipWarning) warnings.push(shipWarning);
      let bin = flags.bin;
      if (bin === undefined) {
        const fallback = defaultAgentBin(packageRoot, 'gemini', committed ? cwd : undefined, projectVar);
        bin = fallback.bin;
        if (fallback.machineSpecific) {
          warnings.push(
            `${file} now holds a machine-specific path (${bin}); run \`npm install -D hookledger\` in the project and install again, or use --user or --bin`,
          );
        }
      }
      install = {
        command: agentHookCommand({
          bin,
          subcommand: 'gemini',
          configPath: resolve(configPath),
          dbPath: dbPath ? resolve(dbPath) : undefined,
          onError,
          shipTo,
          projectDir: committed ? cwd : undefined,
          projectVar,
        }),
        events: flags.events,
        timeouts: geminiTimeouts(hookSet, flags.events, DEFAULT_BACKGROUND_DEADLINE_MS),
      };
    }
    const result = installGemini(file, install);
    warnings.push(...result.warnings);
    if (!flags.print && result.changed) writeConfigText(file, result.text);
    const notes =
      install && result.changed && flags.scope === 'project'
        ? ['Gemini CLI warns before it runs new or changed project hooks: accept the hookledger entries once']
        : [];
    return reportInstall(io, { file, result, print: flags.print, json: flags.json, warnings, notes, importCommand: 'import-gemini' });
  },
};
