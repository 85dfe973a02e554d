import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { shipperHolder, shipperRunning } from '../ledger/ship-lock.js';
import { autoShipFiles, readShipStatus, type AutoShipStatus } from '../ship/auto-files.js';
import { runAutoShipper } from '../ship/auto-shipper.js';
import { writeJson, writeReport, type CliIo } from './io.js';

/** `ship --background` and `ship --status`: automatic shipping's two faces on the command line (docs/ship.md). */

const DEFAULT_DEBOUNCE_MS = 1000;
const DEFAULT_BACKGROUND_RETRY_S = 30;

/** `ship --background`: the detached shipper a hook starts. Exit 0 (shipped, or another shipper has it) or 3. */
export async function shipInBackground(options: {
  ledgerPath: string;
  url: string;
  retrySeconds: string | undefined;
  env: NodeJS.ProcessEnv;
}): Promise<number> {
  const debounce = options.env.HOOKLEDGER_SHIP_DEBOUNCE_MS?.trim();
  if (debounce !== undefined && debounce !== '' && !/^\d+$/.test(debounce))
    throw new UsageError(`HOOKLEDGER_SHIP_DEBOUNCE_MS: "${debounce}" is not a whole number of ms`);
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const result = await runAutoShipper({
      ledgerPath: options.ledgerPath,
      url: options.url,
      debounceMs: debounce ? Number(debounce) : DEFAULT_DEBOUNCE_MS,
      retryForMs: Number(options.retrySeconds ?? DEFAULT_BACKGROUND_RETRY_S) * 1000,
      signal: stop.signal,
    });
    return result === 'failed' ? 3 : 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/** `ship --status`: is a shipper running, what did the last one do, where is the log. Exit 0. */
export function shipStatus(ledgerPath: string, io: CliIo, json: boolean): number {
  const files = autoShipFiles(resolve(ledgerPath));
  const running = shipperRunning(files.locks);
  const holder = running ? shipperHolder(files.locks) : null;
  const last = readShipStatus(files);
  if (json) {
    writeJson(io, { ledger: resolve(ledgerPath), running, holder, last, log: files.log });
    return 0;
  }
  const lines = [`automatic shipping of ${resolve(ledgerPath)}`];
  lines.push(
    `  shipper  ${running ? `running${holder ? ` (pid ${holder.pid}, ${holder.command}, since ${holder.since})` : ''}` : 'not running'}`,
  );
  lines.push(
    `  last     ${last ? describeLast(last, running) : 'none yet (install-claude --ship URL, or HOOKLEDGER_SHIP_TO, starts one after SessionEnd/Stop)'}`,
  );
  lines.push(`  log      ${files.log}`);
  writeReport(io, lines.join('\n'));
  return 0;
}

function describeLast(s: AutoShipStatus, running: boolean): string {
  const shipped = `${s.invocations} invocations (${s.links} links) to ${s.to} in ${s.passes} pass${s.passes === 1 ? '' : 'es'}`;
  const head = s.shippedUpTo !== null ? `; up to link ${s.shippedUpTo} of ${s.localHead}` : '';
  if (s.state === 'failed') return `${s.endedAt ?? s.startedAt} failed: ${s.error ?? 'unknown'} (shipped ${shipped} first)`;
  if (s.state === 'running' && !running)
    return `${s.startedAt} started by pid ${s.pid}, which ended without finishing (killed?); shipped ${shipped}${head}`;
  if (s.state === 'running') return `${s.startedAt} in progress: shipped ${shipped}${head}`;
  return `${s.endedAt ?? s.startedAt} shipped ${shipped}${head}`;
}
