import { readFileSync } from 'node:fs';
import { invocationFromClaude } from '../../adapters/claude-input.js';
import { describeThrown, InputError } from '../../domain/errors.js';
import type { Invocation } from '../../domain/invocation.js';
import { renderReport } from '../../reports/report-text.js';
import { parseInvocation } from '../../runner/runner.js';
import { boolFlag, configOption, ledgerOptions, OTEL_USAGE, otelOption, type Command } from '../command.js';
import { hookSetFor, openLedgerFor, runnerFor } from '../context.js';
import { readAll, useColour, writeJson, type CliIo, writeReport } from '../io.js';
import { painter } from '../../reports/paint.js';

export const command: Command = {
  summary: 'decide one invocation (JSON file or stdin) and record it',
  usage: `run [FILE|-] --config PATH [--db PATH] [--json] [--otel URL]

  FILE       a canonical invocation ({"point": "pre_tool_use", "toolName": ...}) or a Claude Code
             hook payload (recognised by hook_event_name); - or nothing reads stdin
  --config   the hook set: a .ts/.js module exporting defineHooks(...), or a JSON file
  --json     print the full report (every outcome) as JSON
${OTEL_USAGE}
  Exit code 0 whatever the decision; the decision is printed (or in the JSON).`,
  options: { ...ledgerOptions, ...configOption, ...otelOption },
  async run(args, io) {
    const source = args.positionals[0] ?? '-';
    const input = await readInvocation(source, io);
    const hookSet = await hookSetFor(args, io);
    const ledger = openLedgerFor(args, io);
    try {
      const runner = runnerFor(args, io, {
        hookSet,
        ledger,
        onBackgroundError: (error) => io.stderr.write(`hookledger: background hook outcome not recorded: ${describeThrown(error)}\n`),
      });
      const report = await runner.run(input);
      if (boolFlag(args, 'json')) writeJson(io, report);
      else writeReport(io, renderReport(report, painter(useColour(io))));
      await runner.close();
      return 0;
    } finally {
      ledger.close();
    }
  },
};

async function readInvocation(source: string, io: CliIo): Promise<Invocation> {
  const where = source === '-' ? 'stdin' : source;
  let text: string;
  try {
    text = source === '-' ? await readAll(io.stdin) : readFileSync(source, 'utf8');
  } catch (error) {
    throw new InputError(`${where}: cannot read: ${describeThrown(error)}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${where}: not valid JSON: ${describeThrown(error)}`);
  }
  const input = typeof json === 'object' && json !== null && 'hook_event_name' in json ? invocationFromClaude(json, where) : json;
  return parseInvocation(input, where);
}
