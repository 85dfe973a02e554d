import { spawn, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describeThrown } from '../domain/errors.js';
import { packageRoot } from '../ledger/paths.js';
import { displayUrl } from '../ledger/postgres/url.js';

/**
 * `serve` shipping its ledger (docs/ship.md, "From serve"): a `hookledger ship --follow` child
 * that serve starts, restarts and stops. A separate process at nice 10, so shipping never takes
 * the event loop or the CPU a decision needs; serve only reads its stderr lines.
 *
 * The child runs in its own process group (a Ctrl-C at serve's terminal reaches serve, which
 * then stops the child in order) and holds a pipe from serve on its stdin: when serve ends,
 * however it ends (SIGKILL included), the pipe closes and the child stops
 * (`HOOKLEDGER_SHIP_PARENT_PIPE`, cli/commands/ship.ts), so no shipper outlives its server.
 *
 * The child holds the ledger's shipper lock like every shipper (one-shipper.ts): while a hook's
 * background shipper or a manual `ship` has it, the child waits (one line, relayed here) instead
 * of ending and being restarted; while the child has it, those only mark "ship again" or refuse.
 */

export interface ServeShipperOptions {
  ledgerPath: string;
  /** The centre; may carry the password (it travels in the child's environment, never its argv). */
  url: string;
  env: NodeJS.ProcessEnv;
  /** One line for serve's stderr. */
  log: (line: string) => void;
  /** First wait before restarting a child that ended (doubles up to maxRestartDelayMs). */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
}

export interface ServeShipper {
  /** The running child's pid (undefined between a child's end and its restart). */
  readonly pid: number | undefined;
  /** Stops the child (SIGTERM: it finishes its batch and exits), SIGKILL after `graceMs`; no restart after. */
  stop(graceMs?: number): Promise<void>;
}

const SHIPPER_NICE = 10;
/** A child that ran this long before it ended was working: the next restart waits the first delay again. */
const HEALTHY_RUN_MS = 60_000;

export function superviseShipper(options: ServeShipperOptions): ServeShipper {
  const firstDelay = options.restartDelayMs ?? 1000;
  const maxDelay = options.maxRestartDelayMs ?? 60_000;
  const where = displayUrl(options.url);
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  let stopping = false;
  let delay = firstDelay;
  let restartTimer: NodeJS.Timeout | null = null;

  const start = () => {
    restartTimer = null;
    if (stopping) return;
    const startedAt = Date.now();
    const started = spawn(process.execPath, [join(packageRoot, 'bin', 'hookledger.js'), 'ship', '--follow', '--db', options.ledgerPath], {
      detached: true,
      stdio: ['pipe', 'ignore', 'pipe'],
      env: { ...options.env, HOOKLEDGER_SHIP_TO: options.url, HOOKLEDGER_SHIP_PARENT_PIPE: '1' },
      windowsHide: true,
    });
    child = started;
    if (started.pid !== undefined) {
      try {
        setPriority(started.pid, SHIPPER_NICE);
      } catch {
        // Not permitted here: it runs at serve's priority.
      }
      options.log(`shipping ${options.ledgerPath} to ${where} (ship --follow, pid ${started.pid})`);
    }
    // Serve never writes to the pipe; it exists so that its end tells the child serve has gone.
    started.stdin?.on('error', () => {});
    const lines = createInterface({ input: started.stderr! });
    lines.on('line', (line) => options.log(`ship: ${line.replace(/^hookledger: (ship: )?/, '')}`));
    exited = new Promise((resolve) => {
      started.once('error', (error) => {
        options.log(`ship: could not start the shipper: ${describeThrown(error)}`);
        resolve();
        scheduleRestart(startedAt);
      });
      started.once('exit', (code, signal) => {
        child = null;
        resolve();
        if (stopping) return;
        options.log(
          `ship: the shipper (pid ${started.pid}) ended (${signal ?? `exit ${code}`}); restarting in ${Math.round(delayAfter(startedAt) / 100) / 10} s`,
        );
        scheduleRestart(startedAt);
      });
    });
  };

  const delayAfter = (startedAt: number) => (Date.now() - startedAt >= HEALTHY_RUN_MS ? firstDelay : delay);
  const scheduleRestart = (startedAt: number) => {
    if (stopping || restartTimer !== null) return;
    const wait = delayAfter(startedAt);
    delay = Math.min(wait * 2, maxDelay);
    restartTimer = setTimeout(start, wait);
    restartTimer.unref();
  };

  start();
  return {
    get pid() {
      return child?.pid;
    },
    async stop(graceMs = 5000) {
      stopping = true;
      if (restartTimer) clearTimeout(restartTimer);
      const running = child;
      if (!running) return;
      running.kill('SIGTERM');
      const killer = setTimeout(() => running.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(killer);
    },
  };
}
