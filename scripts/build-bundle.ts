/**
 * Bundles the `hookledger claude` path into one ES module with esbuild (already installed as
 * tsx's dependency), so the process Claude Code starts for every event parses one file
 * instead of resolving a few hundred modules. better-sqlite3 (native) and tsx (only loaded
 * for .ts configs) stay external.
 *
 *   node --import tsx scripts/build-bundle.ts [OUT]     default dist/bundle/claude.mjs
 *   node dist/bundle/claude.mjs --config hooks.json     (the same flags as `hookledger claude`)
 *
 * The bundle must sit two directories below the package root (like dist/ledger/paths.js),
 * because the migrations folder is found relative to it.
 */
import { build } from 'esbuild';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const packageRootDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export async function buildClaudeBundle(outFile = join(packageRootDir, 'dist', 'bundle', 'claude.mjs')): Promise<string> {
  await build({
    entryPoints: [join(packageRootDir, 'src', 'cli', 'claude-bin.ts')],
    outfile: outFile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    external: ['better-sqlite3', 'tsx', 'tsx/*'],
    // Bundled CommonJS dependencies call require(); give the ES module one.
    banner: { js: "import { createRequire as __hlCreateRequire } from 'node:module'; const require = __hlCreateRequire(import.meta.url);" },
    logLevel: 'warning',
  });
  return outFile;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildClaudeBundle(process.argv[2] ? resolve(process.argv[2]) : undefined);
  process.stdout.write(`wrote ${out}\n`);
}
