import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { importClaudeHooks, readSettings } from '../../adapters/claude-settings.js';
import { ConfigError, UsageError } from '../../domain/errors.js';
import { stringFlag, type Command } from '../command.js';
import { onFailureFlag, writeClaudeShapedImport } from '../import-output.js';

export const command: Command = {
  summary: 'turn the hooks in a Claude Code settings file into a hookledger hook set',
  usage: `import-claude SETTINGS_FILE [--out hooks.json] [--force] [--name NAME] [--on-failure deny|allow] [--json]

  Each command hook becomes a \`command\` hook (same script, same matcher, timeout converted
  from seconds, default 60 s), each http hook an \`http\` hook: foreground guardrails, in
  the file's order, so they run one at a time with a recorded outcome each. Async hooks
  become background observers. prompt, agent and mcp_tool handlers, and events hookledger
  has no point for, are listed as unsupported (they stay in Claude Code's settings).
  --out         write the hook set here (else it is printed on stdout)
  --on-failure  what a crash, timeout or garbage output means: deny (default: fail closed)
                or allow (fail open, as in Claude Code)`,
  options: {
    out: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
    name: { type: 'string' },
    'on-failure': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args, io) {
    const source = args.positionals[0];
    if (!source) throw new UsageError('import-claude: give the settings file (e.g. .claude/settings.json)');
    const file = resolve(source);
    if (!existsSync(file)) throw new ConfigError(`${source}: settings file not found`);
    const onFailure = onFailureFlag(args);
    const { settings } = readSettings(file);
    const result = importClaudeHooks(settings, {
      source,
      ...(stringFlag(args, 'name') ? { name: stringFlag(args, 'name')! } : {}),
      ...(onFailure ? { onFailure } : {}),
    });

    return writeClaudeShapedImport(args, io, result, source);
  },
};
