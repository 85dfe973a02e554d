import './one-event-zod.js';
import { command } from './commands/codex.js';
import { runHookBin } from './hook-bin.js';

/** The entry of dist/bundle/codex.cjs (see hook-bin.ts). */
runHookBin('codex', command);
