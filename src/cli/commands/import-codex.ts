import { pointForCodexEvent } from '../../adapters/codex-input.js';
import { agentImportCommand } from '../agent-import.js';

export const command = agentImportCommand({
  name: 'import-codex',
  label: 'Codex',
  subcommand: 'codex',
  example: '.codex/hooks.json or .codex/config.toml',
  defaultName: 'codex-hooks',
  agent: { label: 'Codex', pointFor: pointForCodexEvent, timeoutUnitMs: 1000 },
  extraWarnings: () => [],
  notes: 'Codex hook scripts speak Claude Code’s protocol, which hookledger’s command hooks speak too.',
});
