import { isRecord } from '../../adapters/agent-payload.js';
import { pointForGeminiEvent } from '../../adapters/gemini-input.js';
import { agentImportCommand } from '../agent-import.js';

export const command = agentImportCommand({
  name: 'import-gemini',
  label: 'Gemini CLI',
  subcommand: 'gemini',
  example: '.gemini/settings.json',
  defaultName: 'gemini-hooks',
  agent: { label: 'Gemini CLI', pointFor: pointForGeminiEvent, timeoutUnitMs: 1 },
  extraWarnings: (settings) => {
    const warnings: string[] = [];
    const hooks = isRecord(settings.hooks) ? settings.hooks : {};
    for (const [event, groups] of Object.entries(hooks)) {
      for (const group of Array.isArray(groups) ? groups : []) {
        for (const handler of isRecord(group) && Array.isArray(group.hooks) ? group.hooks : []) {
          if (isRecord(handler) && isRecord(handler.env) && Object.keys(handler.env).length > 0) {
            warnings.push(
              `${event} ${String(handler.name ?? handler.command)}: "env" dropped (hookledger hooks run with hookledger's environment); set it in the command`,
            );
          }
        }
      }
    }
    return warnings;
  },
  notes:
    'The imported scripts then receive Gemini’s event and tool names with hookledger’s payload, and may answer with a flat decision (allow, deny, block, ask); a rewrite in hookSpecificOutput.tool_input is not read (use a hookledger modify).',
});
