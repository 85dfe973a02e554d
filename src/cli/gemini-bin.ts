import './one-event-zod.js';
import { command } from './commands/gemini.js';
import { runAgentBin } from './hook-bin.js';

/** The entry of dist/bundle/gemini-bundle.cjs (see runAgentBin). */
runAgentBin('gemini', command);
