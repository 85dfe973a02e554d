import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { runCli } from './main.js';

// `ship` runs from its bundle where the build made one (dist/bundle/ship.cjs; ship-bin.ts says why);
// HOOKLEDGER_SHIP_BUNDLE=0 runs it from the modules, as every other command (the benchmark's A/B).
const shipBundle = new URL('../bundle/ship.cjs', import.meta.url);
if (process.argv[2] === 'ship' && process.env.HOOKLEDGER_SHIP_BUNDLE !== '0' && existsSync(shipBundle))
  createRequire(import.meta.url)(shipBundle.pathname);
else runCli();
