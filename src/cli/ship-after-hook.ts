import { resolveLedgerPath } from '../ledger/paths.js';
import { stringFlag, type CommandArgs } from './command.js';
import { write } from './hook-command-flow.js';
import type { CliIo } from './io.js';

/**
 * Automatic shipping from the agents' command hooks (docs/ship.md, "Set it once"): after the
 * event that ends a turn or a session has been answered and its background hooks are done, a
 * hook with a ship target starts the detached, debounced shipper (ship/auto-trigger.ts).
 */

/**
 * The events after which each agent's hook ships: the end of a turn and of a session, the
 * events an agent fires when it has finished writing for a while. Codex has Claude Code's names;
 * Gemini CLI's turn end is AfterAgent; meerkat's runs end in run_completed or run_failed.
 */
export const SHIP_AFTER = {
  claude: new Set(['Stop', 'SessionEnd']),
  codex: new Set(['Stop', 'SessionEnd']),
  gemini: new Set(['AfterAgent', 'SessionEnd']),
  meerkat: new Set(['run_completed', 'run_failed']),
} as const satisfies Record<string, ReadonlySet<string>>;

const names = (events: ReadonlySet<string>) => [...events].join(' or ');

/** The `--ship-to` lines of an agent hook command's usage. */
export const shipToUsage = (
  events: ReadonlySet<string>,
) => `  --ship-to     after answering ${names(events)}, start a detached \`hookledger ship
                --background\` to this central PostgreSQL (else $HOOKLEDGER_SHIP_TO), unless one
                is running for this ledger; never with the password (docs/ship.md)`;

/** The `--ship` lines of an agent installer's usage. */
export const SHIP_INSTALL_USAGE = (
  events: ReadonlySet<string>,
) => `  --ship URL  after ${names(events)}, ship this ledger to the central PostgreSQL at URL in a
              detached \`hookledger ship --background\` (one per ledger); the password goes in
              PGPASSWORD or ~/.pgpass in the agent's environment, never here (docs/ship.md)`;

/**
 * Starts the shipper when `eventName` is one of `events` and a target is set (`--ship-to`, else
 * $HOOKLEDGER_SHIP_TO). The trigger is loaded only then, so other events never pay for it. Never
 * throws and never waits for the shipper: a problem is one stderr line, the answer is already out.
 */
export async function shipAfterEvent(args: CommandArgs, io: CliIo, eventName: string | null, events: ReadonlySet<string>): Promise<void> {
  const flag = stringFlag(args, 'ship-to');
  const url = flag ?? io.env.HOOKLEDGER_SHIP_TO;
  if (!url || eventName === null || !events.has(eventName)) return;
  const { triggerAutoShip } = await import('../ship/auto-trigger.js');
  const { path } = resolveLedgerPath(stringFlag(args, 'db'), io.env);
  const shipping = triggerAutoShip({ ledgerPath: path, url, fromFlag: flag !== undefined, env: io.env });
  if (!shipping.started && shipping.reason !== 'shipper_running') await write(io.stderr, `hookledger: ${shipping.message}\n`);
}
