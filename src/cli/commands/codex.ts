import { codexProtocol } from '../../adapters/codex.js';
import { agentHookCommand } from '../agent-hook-command.js';

export const command = agentHookCommand(codexProtocol, 'codex', 'install-codex');
