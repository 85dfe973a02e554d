import './one-event-zod.js';
import { command } from './commands/claude.js';
import { runAgentBin } from './hook-bin.js';

/** The entry of dist/bundle/claude-bundle.cjs (see runAgentBin). */
runAgentBin('claude', command);
