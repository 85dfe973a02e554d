/**
 * Bundles the `hookledger claude` path into one ES module with esbuild (already installed as
 * tsx's dependency), so the process Claude Code starts for every event parses one file
 * instead of resolving a few hundred modules. tsx (only loaded for .ts configs) stays
 * external, and so does better-sqlite3's native addon.
 *
 *   node --import tsx scripts/build-bundle.ts [OUT]     default dist/bundle/claude.cjs
 *   node dist/bundle/claude.cjs --config hooks.json     (the same flags as `hookledger claude`)
 *   HOOKLEDGER_BUNDLE_MINIFY=0 …                      readable names, for --cpu-prof
 *
 * The bundle must sit two directories below the package root (like dist/ledger/paths.js),
 * because the migrations folder is found relative to it.
 */
import { build, type Plugin } from 'esbuild';
import ts from 'typescript';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DAEMON_PROTOCOL } from '../src/cli/daemon/socket-place.js';
import { SHARED_LIBRARY_KEY } from '../src/cli/shared-library.js';

export const packageRootDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Writes the bundle as CommonJS (`claude-bundle.cjs`) plus two small launchers that run it
 * through `vm.Script` with a V8 code cache (`claude-bundle.cjs.cache`, written after the first
 * run): `claude.cjs`, what install-claude writes, and `claude.mjs`, which settings written by
 * earlier versions name. Compiling 600 KB of JavaScript is a large share of a process that
 * lives for one event; with the cache V8 skips it (the technique of the v8-compile-cache
 * package; Node 20 has no built-in module compile cache). The launcher is CommonJS because an
 * ES-module entry alone costs about 4 ms more (Node's ESM loader), and a `.mjs`/`.js` config
 * is then loaded with `require()` where Node can (src/runtimes/import-module.ts).
 * better-sqlite3's JavaScript is bundled too (its native addon stays a separate file, found
 * the way the package itself finds it): requiring it from node_modules cost about 4 ms.
 * The sources import zod as `import * as z from 'zod'`: through zod's `z` re-export esbuild
 * kept all of zod (every locale, JSON Schema conversion: 640 KB of bundle instead of 285 KB,
 * about 6 ms of CPU per event), the namespace import lets it drop what is unused.
 */
export async function buildClaudeBundle(outFile = join(packageRootDir, 'dist', 'bundle', 'claude.cjs')): Promise<string> {
  return buildHookBundle('claude', outFile);
}

/** The agents with a command-hook bundle: `hookledger <name>` → dist/bundle/<name>.cjs, from src/cli/<name>-bin.ts. */
export const HOOK_BUNDLES = ['claude', 'codex', 'gemini', 'meerkat'] as const;

/** Commands bundled the same way because a process starts for each (src/cli/ship-bin.ts; bin.ts hands them over). */
export const COMMAND_BUNDLES = ['ship'] as const;

/** What every bundle here is: one CommonJS file for Node 20. */
const SINGLE_CJS_FILE = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  minify: process.env.HOOKLEDGER_BUNDLE_MINIFY !== '0',
  legalComments: 'none',
  logLevel: 'warning',
} as const;

/** Builds one agent's bundle (see {@link buildClaudeBundle}); returns the CommonJS launcher's path. */
export async function buildHookBundle(
  name: (typeof HOOK_BUNDLES)[number] | (typeof COMMAND_BUNDLES)[number],
  outFile = join(packageRootDir, 'dist', 'bundle', `${name}.cjs`),
): Promise<string> {
  const launcher = outFile.replace(/\.[cm]?js$/, '.cjs');
  const codeFile = launcher.replace(/\.cjs$/, '-bundle.cjs');
  const loadsConfigs = HOOK_BUNDLES.includes(name as (typeof HOOK_BUNDLES)[number]);
  await build({
    ...SINGLE_CJS_FILE,
    // An agent's entry first lends the bundle's library to the package root (src/cli/shared-library.ts):
    // require() makes esbuild initialise a module of src/index.ts only when the root asks for it.
    ...(loadsConfigs
      ? {
          stdin: {
            contents: `import { lendLibrary } from './src/cli/shared-library.ts';
lendLibrary(import.meta.url, {
${[...new Set(libraryExports().map((e) => e.module))].map((m) => `  ${JSON.stringify(m)}: () => require('./src/${m}.ts'),`).join('\n')}
});
require('./src/cli/${name}-bin.ts');`,
            resolveDir: packageRootDir,
            sourcefile: `${name}-entry.ts`,
            loader: 'ts' as const,
          },
        }
      : { entryPoints: [join(packageRootDir, 'src', 'cli', `${name}-bin.ts`)] }),
    outfile: codeFile,
    external: ['tsx', 'tsx/*'],
    plugins: [sqliteAddonLocator],
    // The sources locate files (migrations, the worker program) from import.meta.url.
    define: { 'import.meta.url': '__hookledgerModuleUrl' },
    banner: { js: "const __hookledgerModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
  });
  rmSync(`${codeFile}.cache`, { force: true });
  const esmLauncher = ESM_LAUNCHER.replaceAll('claude.cjs', basename(launcher));
  if (loadsConfigs) writeFileSync(launcher.replace(/\.cjs$/, '.mjs'), esmLauncher);
  if (!DAEMON_AGENTS.includes(name)) {
    writeFileSync(launcher, LAUNCHER.replaceAll('claude-bundle.cjs', basename(codeFile)));
    return launcher;
  }
  // The launcher asks the daemon (src/cli/daemon/client.ts); NAME-local.cjs decides in process.
  const local = join(dirname(launcher), `${name}-local.cjs`);
  const localText = LAUNCHER.replaceAll('claude-bundle.cjs', basename(codeFile));
  writeFileSync(local, localText);
  const buildId = createHash('sha256')
    .update(`${DAEMON_PROTOCOL}\n${localText}\n`)
    .update(readFileSync(codeFile))
    .digest('hex')
    .slice(0, 12);
  await build({
    ...SINGLE_CJS_FILE,
    entryPoints: [join(packageRootDir, 'src', 'cli', 'daemon', 'client.ts')],
    outfile: launcher,
    define: {
      __HOOKLEDGER_BUILD_ID__: JSON.stringify(buildId),
      __HOOKLEDGER_DAEMON_DEFAULT__: JSON.stringify(DAEMON_BY_DEFAULT),
      __HOOKLEDGER_AGENT__: JSON.stringify(name),
    },
    banner: {
      js: '// Generated by scripts/build-bundle.ts from src/cli/daemon/client.ts: asks the hookledger daemon, else runs claude-local.cjs.',
    },
  });
  return launcher;
}

/**
 * The agents whose launcher asks a daemon (meerkat's entry writes to the process streams itself
 * and still decides in process).
 */
const DAEMON_AGENTS: readonly string[] = ['claude', 'codex', 'gemini'];

/**
 * Whether the claude launcher asks the daemon when HOOKLEDGER_DAEMON is unset (`off` always
 * disables it, `on` always enables it).
 */
export const DAEMON_BY_DEFAULT = true;

/**
 * better-sqlite3 loads its addon through the `bindings` package, which finds the package root
 * from the caller's stack: inside the bundle that would be hookledger's root. This stands in
 * for it and asks the installed better-sqlite3 package instead (build/Release, where both a
 * compiled and a prebuilt addon are), falling back to `bindings` itself rooted there.
 */
const sqliteAddonLocator: Plugin = {
  name: 'better-sqlite3-addon',
  setup(b) {
    b.onResolve({ filter: /^bindings$/ }, (args) =>
      args.namespace === 'sqlite-addon'
        ? { path: 'bindings', external: true }
        : args.importer.includes(`${sep}better-sqlite3${sep}`)
          ? { path: 'bindings', namespace: 'sqlite-addon' }
          : undefined,
    );
    b.onResolve({ filter: /^better-sqlite3\/package\.json$/ }, () => ({ path: 'better-sqlite3/package.json', external: true }));
    b.onLoad({ filter: /.*/, namespace: 'sqlite-addon' }, () => ({
      loader: 'js',
      contents: `const { dirname, join } = require('node:path');
module.exports = function bindings(name) {
  const root = dirname(require.resolve('better-sqlite3/package.json'));
  try {
    return require(join(root, 'build', 'Release', name));
  } catch (error) {
    if (error && error.code !== 'MODULE_NOT_FOUND') throw error;
    return require('bindings')({ bindings: name, module_root: root });
  }
};`,
    }));
  },
};

const LAUNCHER = `// Generated by scripts/build-bundle.ts: runs claude-bundle.cjs with a V8 code cache.
'use strict';
const { readFileSync, renameSync, writeFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { join } = require('node:path');
const vm = require('node:vm');

const file = join(__dirname, 'claude-bundle.cjs');
const cacheFile = file + '.cache';
let cachedData;
try {
  cachedData = readFileSync(cacheFile);
} catch {}
const script = new vm.Script('(function (exports, require, module, __filename, __dirname) {' + readFileSync(file, 'utf8') + '\\n})', {
  filename: file,
  cachedData,
});
// vm code may not import() on Node 20; lend ours (src/runtimes/import-module.ts uses it).
globalThis.__hookledgerImport = (specifier) => import(specifier);
if (cachedData === undefined || script.cachedDataRejected) {
  // After the work (functions compiled lazily during the run are included); written atomically,
  // and silently skipped where the package directory is read-only. A cache V8 rejects (another
  // Node version, a corrupt file) only costs the compile: it is rewritten here.
  process.once('exit', () => {
    try {
      const tmp = cacheFile + '.' + process.pid;
      writeFileSync(tmp, script.createCachedData());
      renameSync(tmp, cacheFile);
    } catch {}
  });
}
const bundled = { exports: {} };
script.runInThisContext()(bundled.exports, createRequire(file), bundled, file, __dirname);
`;

/** A value src/index.ts exports: its name, the module under src/ it comes from, and whether it is a function declaration. */
interface LibraryExport {
  name: string;
  module: string;
  isFunction: boolean;
}

/**
 * What src/index.ts exports (types left out), read from the sources with TypeScript's parser:
 * each name with its module, and whether that module declares it with `export function` (which
 * the package root may hand over as a wrapper that loads the module on the first call; anything
 * else, a class or a constant, is handed over as it is).
 */
export function libraryExports(): LibraryExport[] {
  const sources = join(packageRootDir, 'src');
  const parse = (file: string) => ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
  const functionsOf = new Map<string, Set<string>>();
  const functions = (module: string) => {
    let names = functionsOf.get(module);
    if (!names) {
      names = new Set(
        parse(join(sources, `${module}.ts`))
          .statements.filter(ts.isFunctionDeclaration)
          .filter((f) => f.name && f.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword))
          .map((f) => f.name!.text),
      );
      functionsOf.set(module, names);
    }
    return names;
  };
  return parse(join(sources, 'index.ts')).statements.flatMap((statement) => {
    if (
      !ts.isExportDeclaration(statement) ||
      statement.isTypeOnly ||
      !statement.exportClause ||
      !ts.isNamedExports(statement.exportClause)
    ) {
      if (ts.isExportDeclaration(statement) && !statement.isTypeOnly)
        throw new Error('src/index.ts: only `export { … } from` is supported');
      return [];
    }
    const module = (statement.moduleSpecifier as ts.StringLiteral).text.replace(/^\.\//, '').replace(/\.js$/, '');
    return statement.exportClause.elements
      .filter((e) => !e.isTypeOnly)
      .map((e) => {
        const local = (e.propertyName ?? e.name).text;
        return { name: e.name.text, module, isFunction: local === e.name.text && functions(module).has(local) };
      });
  });
}

/**
 * Writes DIST/root.js, the package root (`import … from 'hookledger'`) on a Node that can
 * `require()` an ES module (package.json "exports", condition "module-sync": Node 20.19+,
 * 22.12+; older ones get dist/index.js itself). It exports what src/index.ts exports. In a
 * process an agent bundle runs (a hook config importing the package) it hands over the bundle's
 * own modules (src/cli/shared-library.ts): values at once, functions as wrappers that load their
 * module on the first call, so that such a config costs about what one without the import
 * costs. Anywhere else it is dist/index.js loaded with `require()`: the same modules and the
 * same functions an `import` of dist/index.js gives. The names come from src/index.ts, so they
 * cannot drift; types stay dist/index.d.ts ("types" condition). No module src/index.ts reaches
 * may use top-level await, which `require()` cannot load.
 */
export function writePackageRoot(distDir = join(packageRootDir, 'dist')): string {
  const file = join(distDir, 'root.js');
  const exports = libraryExports().map(({ name, module, isFunction }) => {
    const at = `${JSON.stringify(module)}, ${JSON.stringify(name)}`;
    return `export const ${name} = ${isFunction ? 'later' : 'now'}(${at});`;
  });
  writeFileSync(
    file,
    `// Generated by scripts/build-bundle.ts (writePackageRoot): the package root where Node can require() an ES module.
import { createRequire } from 'node:module';

const lend = globalThis[Symbol.for(${JSON.stringify(SHARED_LIBRARY_KEY)})];
const lent = typeof lend === 'function' ? lend(import.meta.url) : undefined;
const library = lent ? undefined : createRequire(import.meta.url)('./index.js');
const now = (module, name) => (lent ? lent(module)[name] : library[name]);
const later = (module, name) =>
  lent
    ? {
        [name](...args) {
          return lent(module)[name].apply(this, args);
        },
      }[name]
    : library[name];

${exports.join('\n')}
`,
  );
  return file;
}

/**
 * The compiled tree `npm run build` writes to dist/ (one ES module per source file), with
 * esbuild and no type check: what the benchmarks and tests that need a whole package in a
 * temporary directory use (next to it: migrations/, node_modules/, the bundles, root.js).
 */
export async function buildCompiledTree(distDir: string): Promise<void> {
  const sources = join(packageRootDir, 'src');
  const tsFiles = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return tsFiles(path);
      return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
    });
  await build({
    entryPoints: tsFiles(sources),
    outdir: distDir,
    outbase: sources,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'error',
  });
}

/** For settings that name the ES-module launcher (written before claude.cjs existed). */
const ESM_LAUNCHER = `// Generated by scripts/build-bundle.ts: the same as claude.cjs, for settings that name this file.
import { createRequire } from 'node:module';

createRequire(import.meta.url)('./claude.cjs');
`;

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = await buildClaudeBundle(process.argv[2] ? resolve(process.argv[2]) : undefined);
  process.stdout.write(`wrote ${out}\n`);
  if (!process.argv[2]) {
    for (const name of [...HOOK_BUNDLES.filter((n) => n !== 'claude'), ...COMMAND_BUNDLES])
      process.stdout.write(`wrote ${await buildHookBundle(name)}\n`);
    process.stdout.write(`wrote ${writePackageRoot()}\n`);
  }
}
