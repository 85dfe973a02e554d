import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadHookSet } from '../../config/load.js';
import type { HookSet } from '../../domain/hooks.js';
import { isPostgresUrl, type Ledger } from '../../ledger/ledger.js';
import { resolveLedgerPath } from '../../ledger/paths.js';
import { stringFlag, type CommandArgs } from '../command.js';
import { openLedgerFor } from '../context.js';
import type { HookCommandResources } from '../hook-command-flow.js';
import type { CliIo } from '../io.js';
import type { ModuleFiles } from './module-files.js';

interface CachedLedger {
  ledger: Promise<Ledger>;
  /** The file's device and inode when opened: another file at the path (deleted, replaced) is opened anew. */
  identity: string | null;
}

/**
 * What the daemon keeps between events: open ledgers, keyed by the ledger file's real path (and
 * the settings that change how it is opened), and loaded hook sets, keyed by the config's
 * absolute path, with a stamp of every file they loaded. The daemon never reloads a hook set in
 * place (Node cannot unload an ES module): when any stamped file changed, {@link staleness}
 * says so and the daemon hands the event back and exits, so the next daemon loads afresh.
 */
export class DaemonCache implements HookCommandResources {
  readonly handleStopSignals = false;
  private readonly hookSets = new Map<string, Promise<HookSet>>();
  /** Every file a loaded hook set came from → its stamp when loaded. */
  private readonly files = new Map<string, string>();
  private readonly ledgers = new Map<string, CachedLedger>();
  /** Ledgers replaced in the cache, closed when the daemon exits (an event may still be using one). */
  private readonly retired: Promise<Ledger>[] = [];
  /** Loads run one at a time, so that the files each reports are its own. */
  private loading: Promise<unknown> = Promise.resolve();
  private failedLoad: string | null = null;

  constructor(private readonly modules: ModuleFiles) {}

  loadHookSet(configPath: string): Promise<HookSet> {
    const file = resolve(configPath);
    const cached = this.hookSets.get(file);
    if (cached) return cached;
    const loaded = this.loading.then(async () => {
      // Stamped before loading: an edit during the load is then seen at the next event.
      const before = stamp(file);
      try {
        return await loadHookSet(file);
      } catch (error) {
        // A module that failed to load stays failed in Node's module cache: the next event gets a fresh daemon.
        this.hookSets.delete(file);
        this.failedLoad = file;
        throw error;
      } finally {
        this.files.set(file, before);
        for (const path of this.modules.takeNew()) if (!this.files.has(path)) this.files.set(path, stamp(path));
      }
    });
    this.loading = loaded.catch(() => {});
    this.hookSets.set(file, loaded);
    return loaded;
  }

  /** Why the loaded hook sets can no longer be used (a file changed, a load failed), or null. */
  staleness(): string | null {
    if (this.failedLoad !== null) return `${this.failedLoad} failed to load`;
    for (const [path, was] of this.files) if (stamp(path) !== was) return `${path} changed`;
    return null;
  }

  openLedger(args: CommandArgs, io: CliIo): Promise<Ledger> {
    const { path } = resolveLedgerPath(stringFlag(args, 'db'), io.env);
    // An in-memory ledger lives for one event, as in a process per event.
    if (path === ':memory:' || path === '') return openLedgerFor(args, io);
    const postgres = isPostgresUrl(path);
    const where = postgres ? path : realPath(path);
    const key = [where, io.env.HOOKLEDGER_SYNC === 'full' ? 'full' : 'normal', io.env.HOOKLEDGER_BUSY_TIMEOUT_MS ?? ''].join('\n');
    const identity = postgres ? null : fileIdentity(where);
    const cached = this.ledgers.get(key);
    if (cached && cached.identity === identity) return cached.ledger;
    if (cached) this.retired.push(cached.ledger);
    const entry: CachedLedger = { ledger: openLedgerFor(args, io), identity };
    this.ledgers.set(key, entry);
    entry.ledger.then(
      () => {
        if (!postgres) entry.identity = fileIdentity(where);
      },
      () => {
        if (this.ledgers.get(key) === entry) this.ledgers.delete(key);
      },
    );
    return entry.ledger;
  }

  /** For `hookledger daemon status`. */
  describe(): { ledgers: string[]; configs: string[] } {
    return { ledgers: [...this.ledgers.keys()].map((key) => key.split('\n')[0]!), configs: [...this.hookSets.keys()] };
  }

  /** Closes every ledger (all writes are committed already). */
  async close(): Promise<void> {
    const all = [...[...this.ledgers.values()].map((entry) => entry.ledger), ...this.retired];
    this.ledgers.clear();
    await Promise.all(all.map((ledger) => ledger.then((l) => l.close()).catch(() => {})));
  }
}

/** What tells a changed file: modification and change times, size, inode. */
function stamp(path: string): string {
  try {
    const s = statSync(path);
    return `${s.mtimeMs}:${s.ctimeMs}:${s.size}:${s.ino}`;
  } catch {
    return 'missing';
  }
}

function fileIdentity(path: string): string | null {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}`;
  } catch {
    return null;
  }
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
