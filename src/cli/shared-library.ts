/**
 * The global under which a hook bundle lends its own copy of the library to the package root
 * (`Symbol.for` of this key, so that the bundle and dist/root.js need no module in common).
 */
export const SHARED_LIBRARY_KEY = 'hookledger.library';

/**
 * What the bundle puts under {@link SHARED_LIBRARY_KEY}: given the URL of the package root module
 * that asks (dist/root.js), the library's exports if that root belongs to the same package copy
 * as the bundle, else `undefined` (that root then loads its own copy).
 */
export type LibraryLender = (rootModuleUrl: string) => object | undefined;

/**
 * Called first by each hook bundle's entry (scripts/build-bundle.ts): a `.mjs` config that
 * imports 'hookledger' gets the library the bundle already holds instead of loading dist/index.js
 * and its few hundred modules a second time (about 85 ms per event). `load` initialises the
 * library's modules the bundle's own path did not (reports, replay, ...) on first use only, so a
 * config that does not import the package pays nothing. The bundle sits in dist/bundle/ and the
 * root module in dist/, so they belong to one copy when two and one levels up are the same
 * directory; a config that imports another installed copy gets that copy, as before.
 */
export function lendLibrary(bundleUrl: string, load: () => object): void {
  const packageDir = new URL('../../', bundleUrl).href;
  const lender: LibraryLender = (rootModuleUrl) => (new URL('../', rootModuleUrl).href === packageDir ? load() : undefined);
  (globalThis as Record<symbol, unknown>)[Symbol.for(SHARED_LIBRARY_KEY)] = lender;
}
