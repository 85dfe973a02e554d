/**
 * Builds the web console's assets into dist/console/assets (part of `npm run build`, shipped in
 * the package: the console loads nothing from a CDN):
 *   console.js   src/console/client/console.ts with uPlot, bundled and minified by esbuild
 *   console.css  uPlot's stylesheet and src/console/assets/console.css
 *   report.css   src/console/assets/report.css (inlined into `hookledger report` files)
 */
import { build } from 'esbuild';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export async function buildConsoleAssets(outDir = join(root, 'dist', 'console', 'assets')): Promise<string> {
  mkdirSync(outDir, { recursive: true });
  await build({
    entryPoints: [join(root, 'src', 'console', 'client', 'console.ts')],
    outfile: join(outDir, 'console.js'),
    bundle: true,
    platform: 'browser',
    format: 'iife',
    target: 'es2020',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const uplotCss = readFileSync(join(root, 'node_modules', 'uplot', 'dist', 'uPlot.min.css'), 'utf8');
  writeFileSync(join(outDir, 'console.css'), `${uplotCss}\n${readFileSync(join(root, 'src', 'console', 'assets', 'console.css'), 'utf8')}`);
  writeFileSync(join(outDir, 'report.css'), readFileSync(join(root, 'src', 'console', 'assets', 'report.css'), 'utf8'));
  return outDir;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await buildConsoleAssets();
}
