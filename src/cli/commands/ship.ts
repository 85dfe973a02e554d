import { UsageError } from '../../domain/errors.js';
import { openLedger } from '../../ledger/open.js';
import { resolveLedgerPath } from '../../ledger/paths.js';
import { isPostgresUrl, passwordInFlag } from '../../ledger/postgres/url.js';
import { takeLedgerForShipping, type LedgerShipper } from '../../ship/one-shipper.js';
import { ship, type ShipProgress, type ShipReport } from '../../ship/ship.js';
import { shipInBackground, shipStatus } from '../ship-auto.js';
import { boolFlag, ledgerOptions, stringFlag, type Command, type CommandArgs } from '../command.js';
import { sourceIdOf } from '../../ledger/ship-source.js';
import { writeJson, writeReport, type CliIo } from '../io.js';

export const command: Command = {
  summary: 'copy this ledger’s committed records into a central PostgreSQL ledger, exactly once',
  usage: `ship --to postgres://USER@HOST/DB [--db PATH] [--json] [--follow] [--batch N] [--retry-for SECONDS]
       ship --source-id [--db PATH] [--json]
       ship --status [--db PATH] [--json]

  Copies every committed record not shipped yet (invocations with their outcomes, background
  completions, hook sets, chain links, prune checkpoints, legal holds) into the central ledger,
  with this ledger's source id and host, then prints counts. Each batch and the source's
  high-water mark commit in one PostgreSQL transaction: re-running, a killed ship or two ships
  at once never duplicate or skip a record. One shipper per ledger: while another ships it (a
  hook's background shipper, another ship), this one says so in one line and waits; when that
  one is a follower (ship --follow, serve --ship's), it says so with its pid and exits 3: the
  follower ships these records. docs/ship.md.
  --to URL             the central ledger (else $HOOKLEDGER_SHIP_TO), without its password
                       (refused: it would show in the process list); give the password with
                       PGPASSWORD or ~/.pgpass, or the whole URL in $HOOKLEDGER_SHIP_TO
  --db PATH            the local SQLite ledger (else $HOOKLEDGER_DB, else ~/.hookledger/ledger.db)
  --follow             keep running: ship new records within a second of their commit (Ctrl-C stops)
  --batch N            links per transaction (default 5000)
  --retry-for SECONDS  while the centre cannot be reached, retry with backoff this long, then
                       exit 3 (default 120; in --follow mode for ever)
  --source-id          print this ledger's source id (created if new) and exit, connecting to
                       nothing: what the centre's owner pins this machine's role to (docs/ship.md)
  --json               the counts as JSON
  --status             automatic shipping (install-claude --ship): whether a shipper is running,
                       the last attempt and its result, where the log is
  --background         what a hook starts after SessionEnd/Stop: one shipper per ledger (else
                       it leaves at once), debounced by $HOOKLEDGER_SHIP_DEBOUNCE_MS (default
                       1000), --retry-for default 30, lines in <ledger>.ship.log
  Exit 0 when done, 3 when the centre or the ledger refuses, 130/143 when stopped by
  SIGINT/SIGTERM while waiting for another shipper (nothing shipped).`,
  options: {
    ...ledgerOptions,
    to: { type: 'string' },
    follow: { type: 'boolean' },
    batch: { type: 'string' },
    'retry-for': { type: 'string' },
    'source-id': { type: 'boolean' },
    status: { type: 'boolean' },
    background: { type: 'boolean' },
  },
  async run(args, io) {
    if (boolFlag(args, 'source-id')) return printSourceId(args, io);
    if (boolFlag(args, 'status')) return shipStatus(resolveLedgerPath(stringFlag(args, 'db'), io.env).path, io, boolFlag(args, 'json'));
    const url = stringFlag(args, 'to') ?? io.env.HOOKLEDGER_SHIP_TO;
    if (!url) throw new UsageError('ship: --to postgres://… is required (or set HOOKLEDGER_SHIP_TO)');
    if (!isPostgresUrl(url))
      throw new UsageError(`ship: --to must be a postgres:// or postgresql:// URL, not ${JSON.stringify(url.slice(0, 80))}`);
    const withPassword = stringFlag(args, 'to') !== undefined ? passwordInFlag('ship: --to', url) : null;
    if (withPassword) throw new UsageError(withPassword);
    const { path, isDefault } = resolveLedgerPath(stringFlag(args, 'db'), io.env);
    if (isPostgresUrl(path)) throw new UsageError('ship: --db names the local SQLite ledger to ship from; the centre goes in --to');
    const batchSize = positiveInt(args, 'batch');
    const retrySeconds = stringFlag(args, 'retry-for');
    if (retrySeconds !== undefined && !/^\d+(\.\d+)?$/.test(retrySeconds))
      throw new UsageError('ship: --retry-for must be a number of seconds');
    const follow = boolFlag(args, 'follow');
    const json = boolFlag(args, 'json');
    if (boolFlag(args, 'background')) return shipInBackground({ ledgerPath: path, url, retrySeconds, env: io.env });
    const tty = Boolean((io.stderr as { isTTY?: boolean }).isTTY);

    const ledger = openLedger({ path, createDirectory: isDefault });
    const stop = new AbortController();
    let stoppedBy: NodeJS.Signals | null = null;
    const onSignal = (signal?: unknown) => {
      if (signal === 'SIGINT' || signal === 'SIGTERM') stoppedBy = signal;
      stop.abort();
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    // Started by `serve` (ship/serve-shipper.ts): serve holds the other end of stdin, so its end,
    // however it ended, stops this follower too.
    if (io.env.HOOKLEDGER_SHIP_PARENT_PIPE === '1') io.stdin.once('end', onSignal).once('error', onSignal).resume();
    let progressShown = false;
    let shipper: LedgerShipper | null = null;
    try {
      // One shipper per ledger (ship/one-shipper.ts): serve's follower waits for anyone, a manual ship for a shipper that finishes.
      shipper = await takeLedgerForShipping({
        ledgerPath: path,
        command: follow ? 'ship --follow' : 'ship',
        patient: io.env.HOOKLEDGER_SHIP_PARENT_PIPE === '1',
        url,
        env: io.env,
        signal: stop.signal,
        notice: (line) => io.stderr.write(`hookledger: ship: ${line}\n`),
      });
      if (!shipper) {
        // Serve's follower ends with serve, quietly; a person who interrupted a waiting ship is told it did nothing.
        if (stoppedBy === null || io.env.HOOKLEDGER_SHIP_PARENT_PIPE === '1') return 0;
        io.stderr.write(`hookledger: ship: stopped by ${stoppedBy} while waiting for the other shipper; nothing was shipped\n`);
        return stoppedBy === 'SIGINT' ? 130 : 143;
      }
      const report = await ship({
        ledger,
        url,
        follow,
        signal: stop.signal,
        ...(batchSize !== undefined ? { batchSize } : {}),
        ...(retrySeconds !== undefined ? { retryForMs: Number(retrySeconds) * 1000 } : {}),
        notice: (line) => {
          if (progressShown) io.stderr.write('\n');
          progressShown = false;
          io.stderr.write(`hookledger: ship: ${line}\n`);
        },
        // A progress line on a terminal, rewritten in place; nothing when output is captured.
        ...(tty
          ? {
              progress: (p: ShipProgress) => {
                progressShown = true;
                io.stderr.write(`\r\x1b[K${progressLine(p)}`);
              },
            }
          : {}),
      });
      if (progressShown) io.stderr.write('\n');
      if (json) writeJson(io, report);
      else writeReport(io, render(report));
      return 0;
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      shipper?.release();
      ledger.close();
    }
  },
};

/** `ship --source-id`: the id a role's row-level security is pinned to before the machine's first ship (docs/ship.md, Security). */
function printSourceId(args: CommandArgs, io: CliIo): number {
  const { path, isDefault } = resolveLedgerPath(stringFlag(args, 'db'), io.env);
  if (isPostgresUrl(path)) throw new UsageError('ship: --db names the local SQLite ledger to ship from; the centre goes in --to');
  const ledger = openLedger({ path, createDirectory: isDefault });
  try {
    const source = sourceIdOf(ledger);
    if (boolFlag(args, 'json')) writeJson(io, { source });
    else io.stdout.write(`${source}\n`);
    return 0;
  } finally {
    ledger.close();
  }
}

function positiveInt(args: Parameters<Command['run']>[0], name: string): number | undefined {
  const text = stringFlag(args, name);
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text) || Number(text) < 1) throw new UsageError(`ship: --${name} must be a positive integer`);
  return Number(text);
}

function progressLine(p: ShipProgress): string {
  return `shipped ${p.shipped.invocations} invocations (${p.shipped.links} links); at link ${p.head.seq} of ${p.localHead}`;
}

function render(r: ShipReport): string {
  const s = r.shipped;
  return [
    `shipped to ${r.to} as source ${r.source} (host ${r.host})`,
    `invocations ${s.invocations}, outcomes ${s.outcomes}, background completions ${s.backgroundCompletions}, prune checkpoints ${s.checkpoints}, hook sets ${s.hookSets}, legal holds ${s.holds}${s.interrupted > 0 ? `, background hooks marked interrupted ${s.interrupted}` : ''}`,
    `links ${s.links}; shipped up to link ${r.head.seq} (ledger at ${r.localHead})${r.retries > 0 ? `; waited for the centre ${r.retries} time${r.retries === 1 ? '' : 's'}` : ''}`,
  ].join('\n');
}
