import { MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES } from '../../adapters/meerkat-output.js';
import { resolveOnErrorPolicy } from '../../adapters/claude.js';
import { createHookServer, DEFAULT_MAX_BODY_BYTES, resolveServerToken } from '../../adapters/server.js';
import { describeThrown, UsageError } from '../../domain/errors.js';
import { setCommandWorkspace } from '../../runtimes/command.js';
import { killRunningHookProcesses } from '../../runtimes/process-groups.js';
import { displayUrl, isPostgresUrl, passwordInFlag } from '../../ledger/postgres/url.js';
import { resolveLedgerPath } from '../../ledger/paths.js';
import { boolFlag, configOption, ledgerOptions, OTEL_USAGE, otelOption, stringFlag, type Command, type CommandArgs } from '../command.js';
import { hookSetFor, openLedgerFor, runnerFor } from '../context.js';
import type { CliIo } from '../io.js';
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const DEFAULT_PORT = 8377;
const DEFAULT_DRAIN_MS = 5000;

export const command: Command = {
  summary: 'HTTP server: Claude Code http hooks and a JSON API (127.0.0.1, bearer token)',
  usage: `serve --config PATH [--db PATH] [--port N] [--host ADDR] [--token TOKEN]
        [--on-error deny|allow] [--max-body-bytes N] [--meerkat-payload-max-bytes N] [--drain-ms N] [--central] [--workspace DIR] [--ship URL] [--json] [--otel URL]

  One long-lived process: no process start per tool call. Routes (all but /healthz need
  "Authorization: Bearer <token>"; without it: 401, nothing recorded):
    POST /claude                  a Claude Code http hook (same answers as hookledger claude)
    POST /meerkat                 a meerkat http hook (same answers as hookledger meerkat; always 200)
    (no Codex or Gemini CLI route: both run command hooks only; use hookledger codex / gemini)
    POST /v1/invocations          an invocation (or Claude payload) → the report
    GET  /v1/invocations/:ref     explanation, by invocation id or tool_use_id
    GET  /v1/denials?sessionId=&toolName=&hookId=&reasonCode=&point=&hookSet=&since=&until=&limit=&cursor=
    GET  /metrics                 Prometheus metrics (docs/telemetry.md)
    GET  /healthz
  --port      default ${DEFAULT_PORT} (0 picks a free port)
  --host      default 127.0.0.1; anything else exposes the ledger to the network
  --token     else $HOOKLEDGER_TOKEN, else the file <db path>.token (created mode 0600)
  --on-error  what /claude answers for a blocking event hookledger cannot decide (default deny)
  --max-body-bytes  larger bodies get 413 (default ${DEFAULT_MAX_BODY_BYTES})
  --meerkat-payload-max-bytes
                    meerkat's [hooks] payload_max_bytes for POST /meerkat (default ${MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES})
  --drain-ms  on SIGINT/SIGTERM, wait this long for requests and background hooks (default ${DEFAULT_DRAIN_MS})
  --central   a server many machines call: a payload's cwd is recorded as data only; command hooks
              run in --workspace and see it as CLAUDE_PROJECT_DIR (default with a postgres:// ledger)
  --workspace where command hooks run in central mode (default: the hook set file's directory)
  --ship URL  ship the (SQLite) ledger to this central PostgreSQL as it grows: serve runs
              \`hookledger ship --follow\` in a child it restarts if it ends and stops with
              serve (else $HOOKLEDGER_SHIP_TO); never with the password (docs/ship.md)
  --json      print the address and token file as one JSON line on stdout once listening
${OTEL_USAGE}`,
  options: {
    ...ledgerOptions,
    ...configOption,
    ...otelOption,
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    token: { type: 'string' },
    'on-error': { type: 'string' },
    'max-body-bytes': { type: 'string' },
    'meerkat-payload-max-bytes': { type: 'string' },
    'drain-ms': { type: 'string' },
    central: { type: 'boolean' },
    workspace: { type: 'string' },
    ship: { type: 'string' },
  },
  async run(args, io) {
    const port = intFlag(args, 'port', DEFAULT_PORT, 0, 65_535);
    const maxBodyBytes = intFlag(args, 'max-body-bytes', DEFAULT_MAX_BODY_BYTES, 1, 1024 * 1024 * 1024);
    const meerkatPayloadMaxBytes = intFlag(args, 'meerkat-payload-max-bytes', MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES, 256, 1024 * 1024 * 1024);
    const drainMs = intFlag(args, 'drain-ms', DEFAULT_DRAIN_MS, 0, 600_000);
    const host = stringFlag(args, 'host') ?? '127.0.0.1';
    const { policy, problem } = resolveOnErrorPolicy(stringFlag(args, 'on-error'), io.env);
    if (problem) throw new UsageError(problem);

    const shipTo = serveShipTarget(args, io);
    const hookSet = await hookSetFor(args, io);
    const workspace = centralWorkspace(args, io);
    if (workspace) setCommandWorkspace({ kind: 'central', dir: workspace });
    const ledger = await openLedgerFor(args, io);
    try {
      const token = resolveServerToken({ flag: stringFlag(args, 'token'), env: io.env, ledgerPath: ledger.location });
      // Metrics are loaded here only: no other command pays for prom-client.
      const { createHookMetrics } = await import('../../telemetry/metrics.js');
      const metrics = createHookMetrics({ backgroundPending: () => runner.backgroundPending });
      const runner = runnerFor(args, io, {
        hookSet,
        ledger,
        observers: [metrics.observe],
        loadTelemetryNow: true,
        // Concurrent requests share their commits (ledger/group-commit.ts); each answer still waits for
        // its own. A lone client's request commits at once: there is nobody to wait for.
        writer: { groupCommit: () => concurrency.busy() },
        onBackgroundError: (error) => io.stderr.write(`hookledger serve: background hook outcome not recorded: ${describeThrown(error)}\n`),
      });
      const concurrency = new ConcurrencySignal();
      const server = createHookServer({
        runner,
        ledger,
        token: token.token,
        onError: policy,
        maxBodyBytes,
        meerkatPayloadMaxBytes,
        log: (line) => io.stderr.write(`${line}\n`),
        metrics: () => metrics.render(),
      });
      server.server.on('request', () => concurrency.arrived());
      const address = await server.listen(port, host).catch((error: unknown) => {
        throw new UsageError(`cannot listen on ${host}:${port}: ${describeThrown(error)}`);
      });

      const where = token.file
        ? `token in ${token.file}${token.created ? ' (new)' : ''}`
        : `token from ${token.source === 'flag' ? '--token' : 'HOOKLEDGER_TOKEN'}`;
      io.stderr.write(`hookledger: serving ${hookSet.name}@${hookSet.version} on ${address.url} (ledger ${ledger.location}; ${where})\n`);
      if (!isLoopback(address.host)) io.stderr.write(`hookledger: warning: listening on ${address.host}, reachable from the network\n`);
      if (boolFlag(args, 'json')) {
        io.stdout.write(
          `${JSON.stringify({ url: address.url, host: address.host, port: address.port, tokenFile: token.file, ledger: ledger.location, hookSet: { name: hookSet.name, version: hookSet.version, fingerprint: hookSet.fingerprint } })}\n`,
        );
      }

      // Shipping runs in a child process at nice 10: it never takes this event loop or a decision's CPU.
      const shipper = shipTo
        ? (await import('../../ship/serve-shipper.js')).superviseShipper({
            ledgerPath: shipTo.ledgerPath,
            url: shipTo.url,
            env: io.env,
            log: (line) => io.stderr.write(`hookledger serve: ${line}\n`),
          })
        : null;

      const signal = await new Promise<NodeJS.Signals>((resolve) => {
        process.once('SIGINT', () => resolve('SIGINT'));
        process.once('SIGTERM', () => resolve('SIGTERM'));
      });
      io.stderr.write(
        `hookledger: ${signal}: draining (${server.inFlight} requests, ${runner.backgroundPending} background hooks; up to ${drainMs} ms)\n`,
      );
      await server.close({ drainMs });
      // A request still in flight after the drain would leave its command hooks orphaned.
      killRunningHookProcesses();
      // After the drain, so that what the last requests committed can still ship.
      await shipper?.stop();
      io.stderr.write('hookledger: stopped\n');
      return 0;
    } finally {
      await ledger.close();
    }
  },
};

/**
 * Whether requests are arriving together: more than one began in the same turn of the event
 * loop, now or within the last BUSY_HOLD_MS. A lone client's requests never do, so each commits
 * at once (no turn of the event loop spent waiting for company); under concurrent clients the
 * first request of each turn is grouped too, from memory.
 */
class ConcurrencySignal {
  private arrivedThisTurn = 0;
  private busyUntil = 0;
  private readonly endTurn = () => {
    this.arrivedThisTurn = 0;
  };

  /** Called as each request begins. */
  arrived(): void {
    if (this.arrivedThisTurn++ === 0) setImmediate(this.endTurn);
  }

  busy(): boolean {
    const now = performance.now();
    if (this.arrivedThisTurn > 1) this.busyUntil = now + BUSY_HOLD_MS;
    return now < this.busyUntil;
  }
}
const BUSY_HOLD_MS = 100;

function intFlag(args: CommandArgs, name: string, fallback: number, min: number, max: number): number {
  const text = stringFlag(args, name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name}: "${text}" must be a whole number from ${min} to ${max}`);
  return n;
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host.startsWith('127.') || host === 'localhost';
}

/**
 * The directory command hooks run in when serving centrally (`--central`, or a PostgreSQL
 * ledger: many machines share it), else null. Default: the hook set file's directory.
 */
function centralWorkspace(args: CommandArgs, io: CliIo): string | null {
  const central = boolFlag(args, 'central') || isPostgresUrl(resolveLedgerPath(stringFlag(args, 'db'), io.env).path);
  const explicit = stringFlag(args, 'workspace');
  if (!central) {
    if (explicit !== undefined) throw new UsageError('--workspace applies only to a central server (--central or a postgres:// ledger)');
    return null;
  }
  const dir = resolve(explicit ?? dirname(resolve(stringFlag(args, 'config') ?? io.env.HOOKLEDGER_CONFIG ?? '.')));
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new UsageError(`--workspace ${dir} is not a directory`);
  return dir;
}

/**
 * The centre `serve` ships its ledger to (`--ship URL`, else $HOOKLEDGER_SHIP_TO), checked before
 * anything starts; null when neither is set. A flag with the password is refused (it would show
 * in the process list); a PostgreSQL or in-memory ledger has nothing to ship: refused with the
 * flag, one warning line with the variable (set for the agents' hooks, perhaps).
 */
function serveShipTarget(args: CommandArgs, io: CliIo): { url: string; ledgerPath: string } | null {
  const flag = stringFlag(args, 'ship');
  const url = flag ?? io.env.HOOKLEDGER_SHIP_TO;
  if (!url) return null;
  const what = flag !== undefined ? '--ship' : 'HOOKLEDGER_SHIP_TO';
  if (!isPostgresUrl(url))
    throw new UsageError(`${what}: must be a postgres:// or postgresql:// URL, not ${JSON.stringify(url.slice(0, 80))}`);
  const withPassword = flag !== undefined ? passwordInFlag('--ship', url) : null;
  if (withPassword) throw new UsageError(withPassword);
  const { path } = resolveLedgerPath(stringFlag(args, 'db'), io.env);
  if (isPostgresUrl(path) || path === ':memory:') {
    const why = `${what}: the ledger (${isPostgresUrl(path) ? displayUrl(path) : path}) is not a local SQLite file; nothing to ship`;
    if (flag !== undefined) throw new UsageError(why);
    io.stderr.write(`hookledger serve: warning: ${why}\n`);
    return null;
  }
  return { url, ledgerPath: resolve(path) };
}
