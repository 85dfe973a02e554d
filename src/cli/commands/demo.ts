import { existsSync, readFileSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { invocationFromClaude } from '../../adapters/claude-input.js';
import { demoHookSet, demoSessionPath } from '../../demo/hook-set.js';
import { describeThrown } from '../../domain/errors.js';
import type { Report } from '../../domain/outcomes.js';
import { openLedger } from '../../ledger/open.js';
import { explain } from '../../ledger/queries/explain.js';
import { renderDemoSummary } from '../../reports/demo-text.js';
import { createRunner } from '../../runner/runner.js';
import { boolFlag, stringFlag, type Command } from '../command.js';
import { useColour, writeJson, writeReport } from '../io.js';
import { painter } from '../../reports/paint.js';

/** The demo writes its own file unless told otherwise, so it never mixes into a real ledger. */
const DEFAULT_DEMO_DB = 'hookledger-demo.db';

export const command: Command = {
  summary: 'run a bundled 84-event Claude Code session through example guardrails',
  usage: `demo [--db PATH] [--json]

  Feeds examples/demo/session.json (two Claude Code sessions with risky calls: rm -rf, reading
  .env and ~/.ssh, curl | sh, writes outside the project, a pasted AWS key) through the demo
  hook set (in-process guardrails and observers, a Python and a Bash command hook, background
  observers, hooks that time out), records everything, and prints a summary and the
  explanation of each denial. Without --db it (re)creates ./${DEFAULT_DEMO_DB}.`,
  options: { db: { type: 'string' }, json: { type: 'boolean' } },
  async run(args, io) {
    const explicit = stringFlag(args, 'db');
    const path = resolve(explicit ?? DEFAULT_DEMO_DB);
    if (!explicit) for (const suffix of ['', '-wal', '-shm']) if (existsSync(path + suffix)) rmSync(path + suffix);
    const payloads = JSON.parse(readFileSync(demoSessionPath, 'utf8')) as Record<string, unknown>[];
    const ledger = openLedger({ path });
    try {
      const runner = createRunner({
        hookSet: demoHookSet,
        ledger,
        onBackgroundError: (error) => io.stderr.write(`hookledger: background hook outcome not recorded: ${describeThrown(error)}\n`),
      });
      const turns = new Map<string, number>();
      const reports: Report[] = [];
      for (const [index, payload] of payloads.entries()) {
        const invocation = invocationFromClaude(payload, `${demoSessionPath} event ${index}`);
        // Claude Code payloads carry no turn number: count prompts per session, as an agent would.
        const session = String(invocation.sessionId);
        if (invocation.point === 'user_prompt_submit') turns.set(session, (turns.get(session) ?? 0) + 1);
        reports.push(await runner.run({ ...invocation, turn: turns.get(session) ?? 0 }));
      }
      await runner.close({ deadlineMs: 10_000 });
      const denials = reports.filter((r) => r.decision === 'deny').map((r) => explain(ledger, r.invocationId));
      if (boolFlag(args, 'json')) {
        writeJson(io, { ledger: ledger.path, hookSet: reports[0]?.hookSet ?? null, reports, denials });
      } else {
        writeReport(
          io,
          renderDemoSummary(
            {
              ledgerPath: ledger.path,
              sessionPath: demoSessionPath,
              hookSet: demoHookSet,
              reports,
              denials,
              dbFlag: explicit ?? DEFAULT_DEMO_DB,
            },
            painter(useColour(io)),
          ),
        );
      }
      return 0;
    } finally {
      ledger.close();
    }
  },
};
