import { readFileSync } from 'node:fs';
import { dirname, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, describeThrown } from '../domain/errors.js';
import { declarativeHookSetSchema, resolveHookSet, type HookSet } from '../domain/hooks.js';
import { formatIssues } from '../domain/results.js';
import type * as TsxApi from 'tsx/esm/api';
import { importModule, importUserModule } from '../runtimes/import-module.js';

/**
 * Loads a hook set: a JSON file of command/http hooks, or a TS/JS module whose default (or
 * `hooks`) export is a `defineHooks(...)` result or a plain definition. TypeScript is loaded
 * through tsx only when needed, so JSON and JS configs keep start-up fast.
 */
export async function loadHookSet(path: string): Promise<HookSet> {
  const file = resolve(path);
  const ext = extname(file);
  if (ext === '.json') return loadJson(file);
  if (!['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'].includes(ext)) {
    throw new ConfigError(`${path}: unsupported config type "${ext}" (use .json, .ts or .js)`);
  }
  let mod: Record<string, unknown>;
  try {
    if (ext === '.ts' || ext === '.mts' || ext === '.cts') {
      const { tsImport } = (await importModule('tsx/esm/api')) as typeof TsxApi;
      mod = (await tsImport(pathToFileURL(file).href, import.meta.url)) as Record<string, unknown>;
    } else {
      mod = await importUserModule(pathToFileURL(file).href);
    }
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ERR_MODULE_NOT_FOUND' && String((error as Error).message).includes(file)) {
      throw new ConfigError(`${path}: config file not found`);
    }
    throw new ConfigError(`${path}: could not load the config module: ${describeThrown(error)}`, { cause: error });
  }
  let exported: unknown = mod.default ?? mod.hooks;
  // A .ts file outside an ESM package is loaded as CommonJS, which nests the default export once more.
  if (isRecord(exported) && !isHookSet(exported) && !Array.isArray(exported.hooks) && 'default' in exported) exported = exported.default;
  if (exported === undefined) throw new ConfigError(`${path}: the module has no default export (export default defineHooks({...}))`);
  if (isHookSet(exported)) return exported;
  return resolveHookSet(exported, path, dirname(file));
}

function loadJson(file: string): HookSet {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(code === 'ENOENT' ? `${file}: config file not found` : `${file}: cannot read: ${describeThrown(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file}: not valid JSON: ${describeThrown(error)}`);
  }
  const parsed = declarativeHookSetSchema.safeParse(json);
  if (!parsed.success) {
    // resolveHookSet gives the friendlier message naming the hook; fall back to the raw issues.
    resolveHookSet(json, file, dirname(file));
    throw new ConfigError(`${file}: ${formatIssues(parsed.error)}`);
  }
  const { $schema: _schema, ...definition } = parsed.data;
  return resolveHookSet(definition, file, dirname(file));
}

function isHookSet(value: unknown): value is HookSet {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as HookSet).fingerprint === 'string' &&
    Array.isArray((value as HookSet).hooks)
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
