import { command } from './commands/ship.js';
import { runCli, runCommand } from './main.js';

/**
 * A direct entry for `hookledger ship`, without command discovery: what the esbuild bundle
 * (`scripts/build-bundle.ts` → dist/bundle/ship.cjs, which bin.ts hands `ship` to) starts from.
 * Loading the command's few hundred modules one by one cost each ship process about 0.12 s of
 * CPU more than the bundle with its code cache (0.21 against 0.09 s for a ship with nothing to
 * ship), which eight sources shipping at once pay eight times (docs/ship.md, "8 sources at once").
 */
runCli((argv, io) => runCommand('ship', command, argv[0] === 'ship' ? argv.slice(1) : argv, io));
