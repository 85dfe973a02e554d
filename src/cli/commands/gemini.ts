import { geminiProtocol } from '../../adapters/gemini.js';
import { agentHookCommand } from '../agent-hook-command.js';

export const command = agentHookCommand(geminiProtocol, 'gemini', 'install-gemini');
