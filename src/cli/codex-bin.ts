import './one-event-zod.js';
import { command } from './commands/codex.js';
import { runAgentBin } from './hook-bin.js';

/** The entry of dist/bundle/codex-bundle.cjs (see runAgentBin). */
runAgentBin('codex', command);
