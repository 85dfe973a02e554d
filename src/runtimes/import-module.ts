/** The launcher of the single-file claude bundle lends its own `import()` under this name. */
const LENT_IMPORT = '__hookledgerImport';

/**
 * `import()` for modules hookledger loads at run time (tsx, user config modules). The claude
 * bundle runs from a V8 code cache through `vm.Script`, where Node 20 allows no dynamic
 * import; its ES-module launcher (scripts/build-bundle.ts) lends a real one instead.
 */
export function importModule(specifier: string): Promise<Record<string, unknown>> {
  const lent = (globalThis as Record<string, unknown>)[LENT_IMPORT] as ((s: string) => Promise<Record<string, unknown>>) | undefined;
  return lent ? lent(specifier) : (import(specifier) as Promise<Record<string, unknown>>);
}
