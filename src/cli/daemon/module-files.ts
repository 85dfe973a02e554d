import { createRequire, register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';

/**
 * The files a config loads, so the daemon can tell when any of them changed: every module Node's
 * ES-module loader loads (a `module.register()` load hook reports its URL; the daemon loads
 * configs with `import()` only, see importUserModulesOnly) and every CommonJS file `require()`
 * adds to the module cache (what a .cjs module or a package requires). Not covered: files a
 * config reads itself (readFileSync of a JSON list, say) and modules it imports lazily inside a
 * hook after loading (they are reported at the next load, so a change to them is only seen
 * after the daemon restarts for another reason).
 */
export interface ModuleFiles {
  /** The files loaded since the last call (absolute paths). */
  takeNew(): string[];
}

const LOAD_HOOK = `let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, nextLoad) {
  if (url.startsWith('file:')) port.postMessage(url);
  return nextLoad(url, context);
}`;

/** Starts watching module loads. Throws where Node has no module.register (before 20.6). */
export function watchModuleFiles(): ModuleFiles {
  if (typeof register !== 'function') throw new Error(`Node ${process.version} has no module.register()`);
  const { port1, port2 } = new MessageChannel();
  register(`data:text/javascript,${encodeURIComponent(LOAD_HOOK)}`, { data: { port: port2 }, transferList: [port2] });
  port1.unref();
  const requireCache = createRequire(import.meta.url).cache;
  const seen = new Set(Object.keys(requireCache));
  return {
    takeNew() {
      const found: string[] = [];
      for (let message = receiveMessageOnPort(port1 as MessagePort); message; message = receiveMessageOnPort(port1 as MessagePort)) {
        const path = filePath(String(message.message));
        if (path !== null && !seen.has(path)) {
          seen.add(path);
          found.push(path);
        }
      }
      for (const path of Object.keys(requireCache)) {
        if (!seen.has(path)) {
          seen.add(path);
          found.push(path);
        }
      }
      return found;
    },
  };
}

function filePath(url: string): string | null {
  try {
    const u = new URL(url);
    u.search = '';
    u.hash = '';
    return fileURLToPath(u);
  } catch {
    return null;
  }
}
