import { config } from 'zod';

/**
 * Imported first by each command-hook bundle's entry (claude-bin.ts, codex-bin.ts, …): a
 * process that decides one event uses each schema about once, so zod's JIT (compiling an
 * object schema's parser with `new Function` on its first parse) costs more than it saves.
 * zod reads the setting when a schema is constructed, not when it parses, so it must be set
 * before any module builds its schemas: setting it in runHookBin (as before) left every
 * schema built at module load with the JIT on (about 2.5 ms of CPU per event).
 */
// The claude daemon (started with --hookledger-daemon) decides many events: there the JIT pays.
config({ jitless: process.argv[2] !== '--hookledger-daemon' });
