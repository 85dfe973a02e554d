import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The launcher of the single-file claude bundle lends its own `import()` under this name. */
const LENT_IMPORT = '__hookledgerImport';

/**
 * `import()` for modules hookledger loads at run time (tsx, user config modules). The claude
 * bundle runs from a V8 code cache through `vm.Script`, where Node 20 allows no dynamic
 * import; its launcher (scripts/build-bundle.ts) lends a real one instead.
 */
export function importModule(specifier: string): Promise<Record<string, unknown>> {
  const lent = (globalThis as Record<string, unknown>)[LENT_IMPORT] as ((s: string) => Promise<Record<string, unknown>>) | undefined;
  return lent ? lent(specifier) : (import(specifier) as Promise<Record<string, unknown>>);
}

let alwaysImport = false;

/**
 * Loads user modules with `import()` only, never `require()`: the claude daemon watches the files
 * a config loads through a module-loader hook, which Node 20 only calls for `import()`.
 */
export function importUserModulesOnly(): void {
  alwaysImport = true;
}

/** require() failures after which `import()` is tried: a top-level await, or a case only the ESM loader reports as it should. */
const IMPORT_INSTEAD = new Set(['ERR_REQUIRE_ASYNC_MODULE', 'ERR_REQUIRE_ESM', 'MODULE_NOT_FOUND', 'ERR_UNKNOWN_FILE_EXTENSION']);

/**
 * Loads a user's JavaScript module (a hook-set config) by file URL, with the namespace that
 * `import()` gives. Where Node can `require()` an ES module (`process.features.require_module`:
 * Node 20.19+ and 22.12+) it is loaded synchronously: in a process that starts for one event
 * (`hookledger claude`), Node's asynchronous ES-module loader costs about 2 ms more. A module
 * `require()` cannot take (top-level await) or cannot find goes through `import()`, which then
 * says what is wrong in the usual words.
 */
export async function importUserModule(url: string): Promise<Record<string, unknown>> {
  if (!alwaysImport && (process.features as { require_module?: boolean }).require_module === true && url.startsWith('file:')) {
    let loaded: unknown;
    try {
      loaded = createRequire(import.meta.url)(fileURLToPath(url));
    } catch (error) {
      if (!IMPORT_INSTEAD.has((error as NodeJS.ErrnoException)?.code ?? '')) throw error;
      return importModule(url);
    }
    // An ES module's namespace, or one a require hook (tsx) compiled to CommonJS, which marks it.
    const record = typeof loaded === 'object' && loaded !== null ? (loaded as Record<string, unknown>) : null;
    if (record !== null && (Object.prototype.toString.call(record) === '[object Module]' || record.__esModule === true)) return record;
    // A CommonJS module: import() would give its exports as the default export, beside the named ones.
    return { ...record, default: loaded };
  }
  return importModule(url);
}
