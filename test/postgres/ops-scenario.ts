import { setTimeout as sleep } from 'node:timers/promises';
import { defineHooks, type HookSet } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import type { Outcome, Report } from '../../src/domain/outcomes.js';
import { outcomeFromRow, type OutcomeRow } from '../../src/ledger/rows.js';
import type { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import type { InvocationRecorder, RecordingLedger } from '../../src/runner/recorder.js';
import { createRunner, parseInvocation } from '../../src/runner/runner.js';

/**
 * One varied scenario for the operations parity tests (health, export, replay): denials, asks,
 * modifies, a fail-closed timeout, a throwing observer, an observer that tries to deny, skipped
 * and background hooks, several sessions, agents and a subagent, and hostile text (CSV formulas,
 * quotes, newlines, HTML, a NUL inside JSON, emoji) in prompts, inputs and hook messages.
 */
export const opsHookSet = defineHooks({
  name: 'ops-parity',
  version: '1',
  redact: { paths: ['toolInput.token'] },
  hooks: [
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      priority: 10,
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('rm -rf')
          ? {
              decision: 'deny',
              reasonCode: 'safety_violation',
              message: '=HYPERLINK("http://evil","x"), "quoted"\nline <script>alert(1)</script>',
              payload: { rule: 'rm' },
            }
          : undefined,
    },
    {
      id: 'ask-push',
      point: 'pre_tool_use',
      match: 'Bash',
      capability: 'guardrail',
      priority: 15,
      run: (inv) => (JSON.stringify(inv.toolInput).includes('git push') ? { decision: 'ask', message: '+force push?' } : undefined),
    },
    {
      id: 'quote-paths',
      point: 'pre_tool_use',
      capability: 'guardrail',
      priority: 20,
      run: (inv) =>
        JSON.stringify(inv.toolInput).includes('cat ')
          ? { decision: 'modify', input: { command: 'cat -- "file"' }, reason: 'quoted' }
          : undefined,
    },
    {
      id: 'slow-policy',
      point: 'pre_tool_use',
      match: 'Write',
      capability: 'guardrail',
      priority: 30,
      timeoutMs: 20,
      run: async (_inv, ctx) => {
        await sleep(500, undefined, { signal: ctx.signal }).catch(() => undefined);
        return undefined;
      },
    },
    {
      id: 'flaky-observer',
      point: 'pre_tool_use',
      priority: 40,
      run: (inv) => {
        if (JSON.stringify(inv.toolInput).includes('boom')) throw new Error('@SUM(1+1) observer blew up, "really"');
        return undefined;
      },
    },
    {
      id: 'pushy-observer',
      point: 'pre_tool_use',
      match: 'Read',
      priority: 50,
      run: () => ({ decision: 'deny', message: 'observers cannot deny' }),
    },
    { id: 'context', point: 'user_prompt_submit', run: () => ({ additionalContext: 'be careful\u2028here' }) },
    { id: 'audit', point: 'pre_tool_use', mode: 'background', run: () => undefined },
    { id: 'post', point: 'post_tool_use', run: () => undefined },
  ],
});

const inputs: unknown[] = [
  { point: 'user_prompt_submit', sessionId: 'p1', agent: 'claude-code', prompt: '=cmd|" /C calc"!A0 clean up \ud83e\uddf9 the repo' },
  {
    point: 'pre_tool_use',
    sessionId: 'p1',
    agent: 'claude-code',
    toolName: 'Bash',
    toolUseId: 'toolu_1',
    toolInput: { command: 'rm -rf /', token: 'ghp_secret' },
  },
  {
    point: 'pre_tool_use',
    sessionId: 'p1',
    agent: 'claude-code',
    toolName: 'Bash',
    toolUseId: 'toolu_2',
    toolInput: { command: 'cat file' },
  },
  {
    point: 'post_tool_use',
    sessionId: 'p1',
    agent: 'claude-code',
    toolName: 'Bash',
    toolUseId: 'toolu_2',
    toolInput: { command: 'cat file' },
    toolResponse: { ok: 1 },
  },
  {
    point: 'pre_tool_use',
    sessionId: 'p1',
    agent: 'claude-code',
    toolName: 'Bash',
    toolUseId: 'toolu_3',
    toolInput: { command: 'git push -f' },
  },
  {
    point: 'pre_tool_use',
    sessionId: 'p2',
    agent: 'claude-code/Explore',
    toolName: 'Read',
    toolUseId: 'toolu_4',
    toolInput: { path: '/etc/hosts', note: 'nul\u0000inside, "q", line\nbreak' },
  },
  {
    point: 'pre_tool_use',
    sessionId: 'p2',
    agent: 'codex',
    toolName: 'Write',
    toolUseId: 'toolu_5',
    toolInput: { path: 'a.txt', content: 'x' },
  },
  { point: 'pre_tool_use', sessionId: 'p3', agent: 'codex', toolName: 'Bash', toolUseId: 'toolu_6', toolInput: { command: 'echo boom' } },
  { point: 'session_start', sessionId: 'p3', agent: 'codex' },
];

const DAY_MS = 86_400_000;

/** One recorded invocation, ready to be written into any ledger with its times shifted. */
export interface RecordedEvent {
  invocation: Invocation;
  report: Report;
  finishedAt: number;
  /** Background outcomes as they completed, in the order `finish` returns their row ids. */
  background: Outcome[];
}

/**
 * Runs the scenario once through the real runner on a scratch SQLite ledger and returns what it
 * recorded (reports, finish times, completed background outcomes).
 */
export async function recordScenario(scratch: SqliteLedger): Promise<RecordedEvent[]> {
  const runner = createRunner({ hookSet: opsHookSet, ledger: scratch });
  const reports: Report[] = [];
  for (const input of inputs) reports.push(await runner.run(input as Parameters<typeof runner.run>[0]));
  await runner.close();
  const finished = scratch.sqlite.prepare('SELECT finished_at FROM invocations WHERE id = ?').pluck();
  const background = scratch.sqlite.prepare(`SELECT * FROM outcomes WHERE mode = 'background' AND invocation_id = ? ORDER BY id`);
  return reports.map((report, i) => ({
    invocation: parseInvocation(inputs[i]) as Invocation,
    report,
    finishedAt: finished.get(report.invocationId) as number,
    background: (background.all(report.invocationId) as OutcomeRow[]).map(outcomeFromRow),
  }));
}

const shift = (at: number | null, by: number) => (at === null ? null : at - by);

/**
 * Writes the recorded events into a ledger, the whole scenario once per day in `daysBack`
 * (each copy shifted that many days into the past), through the engine's own recorder: the same
 * rows with the same times on every engine.
 */
export async function writeScenario(
  ledger: RecordingLedger,
  events: RecordedEvent[],
  daysBack: number[],
  hookSet: HookSet = opsHookSet,
): Promise<void> {
  const recorder: InvocationRecorder = ledger.writer();
  const hookSetId = await recorder.hookSetId(hookSet);
  for (const days of daysBack) {
    const by = days * DAY_MS;
    for (const e of events) {
      const outcomes = e.report.outcomes.map((o) => ({ ...o, startedAt: shift(o.startedAt, by) }));
      const id = await recorder.begin(hookSetId, e.invocation, e.report.startedAt - by);
      const pending = await recorder.finish(id, e.report, outcomes, e.finishedAt - by);
      for (const [k, rowId] of pending.entries()) {
        const done = e.background[k]!;
        await recorder.startBackground(rowId, done.startedAt! - by, done.executionOrder!);
        await recorder.completeBackground(rowId, { ...done, startedAt: done.startedAt! - by });
      }
    }
  }
}
