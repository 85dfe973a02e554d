/**
 * The global under which a hook bundle lends its own copy of the library to the package root
 * (`Symbol.for` of this key, so that the bundle and dist/root.js need no module in common).
 */
export const SHARED_LIBRARY_KEY = 'hookledger.library';

/**
 * One module of the library, by its path under src/ without the extension (`domain/hooks`):
 * its exports, its module code run on the first request only.
 */
export type LibraryModule = (path: string) => Record<string, unknown>;

/**
 * What the bundle puts under {@link SHARED_LIBRARY_KEY}: given the URL of the package root module
 * that asks (dist/root.js), the bundle's modules if that root belongs to the same package copy
 * as the bundle, else `undefined` (that root then loads its own copy, dist/index.js).
 */
export type LibraryLender = (rootModuleUrl: string) => LibraryModule | undefined;

/**
 * Called first by each agent bundle's entry (scripts/build-bundle.ts): a `.mjs` config that
 * imports 'hookledger' gets the library the bundle already holds instead of loading dist/index.js
 * and its few hundred modules a second time (about 100 ms per event). `modules` maps each module
 * src/index.ts exports from to a function that initialises it (esbuild's lazy `require`), so a
 * config pays only for the modules whose values the root must hand over at once; functions are
 * handed over as wrappers that initialise their module on the first call (writePackageRoot).
 * The bundle sits in dist/bundle/ and the root module in dist/, so they belong to one copy when
 * two and one levels up are the same directory; a config that imports another installed copy
 * gets that copy, as before.
 */
export function lendLibrary(bundleUrl: string, modules: Record<string, () => Record<string, unknown>>): void {
  const packageDir = new URL('../../', bundleUrl).href;
  const part: LibraryModule = (path) => {
    const load = modules[path];
    if (!load) throw new Error(`hookledger: this bundle has no library module ${path}`);
    return load();
  };
  const lender: LibraryLender = (rootModuleUrl) => (new URL('../', rootModuleUrl).href === packageDir ? part : undefined);
  (globalThis as Record<symbol, unknown>)[Symbol.for(SHARED_LIBRARY_KEY)] = lender;
}
