import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { isHookledgerCommand, readJsonConfig } from '../adapters/agent-install.js';
import { importClaudeHooks, type ClaudeHandler, type ImportOptions } from '../adapters/claude-settings.js';
import { ConfigError, describeThrown, UsageError } from '../domain/errors.js';
import { stringFlag, type Command } from './command.js';
import { onFailureFlag, writeClaudeShapedImport } from './import-output.js';

/**
 * import-codex and import-gemini: another agent's hooks (Claude Code's shape) → a hook set,
 * through import-claude's importer with the agent's events, timeout unit and own entries.
 */
export interface AgentImport {
  name: 'import-codex' | 'import-gemini';
  label: string;
  subcommand: 'codex' | 'gemini';
  example: string;
  defaultName: string;
  agent: Omit<NonNullable<ImportOptions['agent']>, 'isHookledger'>;
  /** What the importer cannot carry over, beyond what importClaudeHooks reports. */
  extraWarnings: (settings: Record<string, unknown>) => string[];
  notes: string;
}

export function agentImportCommand(spec: AgentImport): Command {
  return {
    summary: `turn the hooks in a ${spec.label} configuration into a hookledger hook set`,
    usage: `${spec.name} FILE [--out hooks.json] [--force] [--name NAME] [--on-failure deny|allow] [--json]

  FILE is ${spec.example}. Each command hook becomes a \`command\` hook (same script, same
  matcher, timeout converted, default 60 s): foreground guardrails, in the file's order.
  Handlers and events hookledger cannot run are listed as unsupported (keep them in
  ${spec.label}'s configuration). ${spec.notes}
  --out         write the hook set here (else it is printed on stdout)
  --on-failure  what a crash, timeout or garbage output means: deny (default: fail closed)
                or allow (fail open, as in ${spec.label})`,
    options: {
      out: { type: 'string', short: 'o' },
      force: { type: 'boolean' },
      name: { type: 'string' },
      'on-failure': { type: 'string' },
      json: { type: 'boolean' },
    },
    async run(args, io) {
      const source = args.positionals[0];
      if (!source) throw new UsageError(`${spec.name}: give the configuration file (${spec.example})`);
      const file = resolve(source);
      if (!existsSync(file)) throw new ConfigError(`${source}: file not found`);
      const onFailure = onFailureFlag(args);
      const settings = file.endsWith('.toml') ? readToml(file, source) : readJsonConfig(file).value;
      const result = importClaudeHooks(settings, {
        source,
        name: stringFlag(args, 'name') ?? spec.defaultName,
        ...(onFailure ? { onFailure } : {}),
        agent: { ...spec.agent, isHookledger: (h: ClaudeHandler) => isHookledgerCommand(h, spec.subcommand) },
      });
      return writeClaudeShapedImport(args, io, result, source, spec.extraWarnings(settings));
    },
  };
}

function readToml(file: string, source: string): Record<string, unknown> {
  try {
    return parseToml(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch (error) {
    throw new ConfigError(`${source}: not valid TOML (${describeThrown(error).split('\n')[0]})`);
  }
}
