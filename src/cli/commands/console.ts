import { resolve } from 'node:path';
import { resolveServerToken } from '../../adapters/server.js';
import { createConsoleServer } from '../../console/server.js';
import { describeThrown, UsageError } from '../../domain/errors.js';
import { boolFlag, ledgerOptions, stringFlag, type Command } from '../command.js';
import { resolveLedgerPath } from '../../ledger/paths.js';
import { openLedgerFor } from '../context.js';
import { wholeNumber } from '../filter-flags.js';

const DEFAULT_PORT = 8378;

export const command: Command = {
  summary: 'read-only web console: sessions, denials, explain, hook health, replays, integrity',
  usage: `console [--db PATH|URL] [--port N] [--host ADDR] [--token TOKEN] [--anchor FILE] [--json]

  Serves the ledger as web pages for auditors (docs/console.md), read-only: a SQLite file is
  opened read-only, so agents can keep writing it; --db postgres://... reads a PostgreSQL
  ledger. Prints the URL; log in with the token.
  --port      default ${DEFAULT_PORT} (0 picks a free port)
  --host      default 127.0.0.1; anything else exposes the ledger to the network
  --token     else $HOOKLEDGER_TOKEN, else the file <db path>.token (created mode 0600,
              shared with hookledger serve)
  --anchor    a verify --anchor file: the integrity page checks the chain against it
  --json      print {"url", "host", "port", "tokenFile", "ledger"} as one line once listening`,
  options: {
    ...ledgerOptions,
    port: { type: 'string', short: 'p' },
    host: { type: 'string' },
    token: { type: 'string' },
    anchor: { type: 'string' },
  },
  async run(args, io) {
    const port = wholeNumber(args, 'port', DEFAULT_PORT, 0);
    if (port > 65_535) throw new UsageError(`--port: "${port}" must be a whole number from 0 to 65535`);
    const host = stringFlag(args, 'host') ?? '127.0.0.1';
    const anchor = stringFlag(args, 'anchor');
    const ledger = await openLedgerFor(args, io, { readonly: true });
    try {
      const token = resolveServerToken({ flag: stringFlag(args, 'token'), env: io.env, ledgerPath: ledger.location });
      const server = createConsoleServer({
        ledger,
        token: token.token,
        anchorFile: anchor ? resolve(anchor) : null,
        // The verify worker opens its own connection: the path or URL as given (a URL with its password).
        reopen: { path: resolveLedgerPath(stringFlag(args, 'db'), io.env).path, readonly: true },
        log: (line) => io.stderr.write(`${line}\n`),
      });
      const address = await server.listen(port, host).catch((error: unknown) => {
        throw new UsageError(`cannot listen on ${host}:${port}: ${describeThrown(error)}`);
      });
      const where = token.file
        ? `token in ${token.file}${token.created ? ' (new)' : ''}`
        : `token from ${token.source === 'flag' ? '--token' : 'HOOKLEDGER_TOKEN'}`;
      if (boolFlag(args, 'json')) {
        io.stdout.write(
          `${JSON.stringify({ url: address.url, host: address.host, port: address.port, tokenFile: token.file, ledger: ledger.location })}\n`,
        );
      } else {
        io.stdout.write(`hookledger console: ${address.url} (ledger ${ledger.location}; ${where})\n`);
      }
      if (!['127.0.0.1', '::1', 'localhost'].includes(address.host) && !address.host.startsWith('127.')) {
        io.stderr.write(`hookledger: warning: listening on ${address.host}, reachable from the network\n`);
      }
      const signal = await new Promise<NodeJS.Signals>((done) => {
        process.once('SIGINT', () => done('SIGINT'));
        process.once('SIGTERM', () => done('SIGTERM'));
      });
      io.stderr.write(`hookledger: ${signal}: console stopped\n`);
      await server.close();
      return 0;
    } finally {
      await ledger.close();
    }
  },
};
