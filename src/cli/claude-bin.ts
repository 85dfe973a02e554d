import './one-event-zod.js';
import { command } from './commands/claude.js';
import { runHookBin } from './hook-bin.js';

/** The entry of dist/bundle/claude.cjs (see hook-bin.ts). */
runHookBin('claude', command);
