import './one-event-zod.js';
import { command } from './commands/gemini.js';
import { runHookBin } from './hook-bin.js';

/** The entry of dist/bundle/gemini.cjs (see hook-bin.ts). */
runHookBin('gemini', command);
