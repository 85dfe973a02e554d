import { DEFAULT_BACKGROUND_DEADLINE_MS } from '../../adapters/claude.js';
import { decideMeerkatCommand } from '../../adapters/meerkat.js';
import { MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES } from '../../adapters/meerkat-output.js';
import { oneLine } from '../../domain/text.js';
import { OTEL_USAGE, stringFlag, type Command } from '../command.js';
import { hookCommandOptions, runHookCommand, write } from '../hook-command-flow.js';
import { SHIP_AFTER, shipAfterEvent, shipToUsage } from '../ship-after-hook.js';
import type { CliIo } from '../io.js';

export const command: Command = {
  summary: 'meerkat (rkat) command hook: read the invocation on stdin, decide, answer meerkat',
  usage: `meerkat --config PATH [--db PATH] [--on-error deny|allow] [--payload-max-bytes N] [--background-deadline-ms N] [--otel URL]
        [--ship-to URL]

  Register as a command entry in meerkat's [[hooks.entries]] (hookledger install-meerkat
  writes them). Reads meerkat's invocation JSON on stdin, runs the hook set, records
  everything (agent meerkat, meerkat's point name, the raw invocation) and prints exactly one
  answer: {} or {"decision": ...}. Always exits 0: meerkat fails the whole run on anything else.
  docs/meerkat.md has the mapping (ask and rewrites are answered as denies).

  --config      the hook set (else $HOOKLEDGER_CONFIG): .ts/.js module or JSON file
  --on-error    when hookledger itself cannot decide (bad input, config, ledger): deny
                (default: reason_code runtime_error) or allow; else $HOOKLEDGER_ON_ERROR
  --payload-max-bytes
                meerkat's [hooks] payload_max_bytes (default ${MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES}): a larger
                invocation is refused, and the answer is kept under it
  --background-deadline-ms
                after answering, wait at most this long for background hooks (default ${DEFAULT_BACKGROUND_DEADLINE_MS})
${OTEL_USAGE}
${shipToUsage(SHIP_AFTER.meerkat)}`,
  options: { ...hookCommandOptions, 'payload-max-bytes': { type: 'string' } },
  run: (args, io) =>
    runHookCommand(args, io, async (deps, deadlineMs) => {
      const payloadMaxBytes = parsePayloadMax(stringFlag(args, 'payload-max-bytes'), io);
      const result = await decideMeerkatCommand({ ...deps, payloadMaxBytes });
      // The answer goes out (and is flushed) before background hooks are waited for.
      await write(io.stdout, `${JSON.stringify(result.answer)}\n`);
      if (result.problem !== null) await write(io.stderr, `hookledger: ${oneLine(result.problem)}\n`);
      await result.finish(deadlineMs);
      await shipAfterEvent(args, io, result.pointName, SHIP_AFTER.meerkat);
      return 0;
    }),
};

/** A bad flag must not cost the answer: say so and keep meerkat's default. */
function parsePayloadMax(value: string | undefined, io: CliIo): number {
  if (value === undefined) return MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES;
  const n = Number(value);
  if (Number.isInteger(n) && n >= 256) return n;
  io.stderr.write(
    `hookledger: --payload-max-bytes: "${value}" is not a whole number of bytes (at least 256); using ${MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES}\n`,
  );
  return MEERKAT_DEFAULT_PAYLOAD_MAX_BYTES;
}
