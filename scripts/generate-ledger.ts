/**
 * Generates a realistic large ledger for the report benchmark (scripts/bench-reports.ts).
 *
 *   npm run generate:ledger -- --out /tmp/hookledger-1m.db [--invocations 1000000] [--sessions 5000] [--days 90] [--seed 1]
 *   npm run generate:ledger -- --db postgres://user@host:5432/dbname [--invocations 1000000] …
 *
 * `--db` takes a file path or a PostgreSQL URL; PostgreSQL is loaded by
 * scripts/generate-ledger-postgres.ts (COPY, always chained) from the same history. On SQLite, rows go through the real write path (LedgerWriter.begin / finish, the statements the runner
 * uses), with synthetic hook outcomes instead of running hooks, in large transactions. The
 * shape: Claude Code-like sessions (session start, prompts, tool calls with pre and post
 * events, stop, session end) spread over `days` days; three versions of a hook set; about six
 * outcomes per invocation; about 5% of invocations denied, by several guardrails and
 * reasons; some hooks slow, some failing, some timing out.
 */
import { existsSync, rmSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { defineHooks, type HookSet, type ResolvedHook } from '../src/domain/hooks.js';
import { normaliseInvocation, type Invocation } from '../src/domain/invocation.js';
import type { Outcome } from '../src/domain/outcomes.js';
import type { Decision, ReasonCode } from '../src/domain/results.js';
import { catchUpRollup } from '../src/ledger/rollup-upkeep.js';
import { SqliteLedger } from '../src/ledger/sqlite-ledger.js';
import { LedgerWriter, type InvocationResult } from '../src/ledger/write.js';
import { blankOutcome } from '../src/runner/outcome.js';
import { seededRandom } from './bench-support.js';

/** The shape of the synthetic history (the same on every engine for the same values). */
export interface HistoryOptions {
  invocations: number;
  sessions: number;
  days: number;
  seed: number;
  /** Newest invocation time; default now. */
  end?: number;
}

export interface GenerateOptions extends HistoryOptions {
  out: string;
  /** Write tamper-evidence chain links as the runner does (slower; default off). */
  chain?: boolean;
  /** Maintain every index row by row during the load instead of rebuilding them after it (slower). */
  keepIndexes?: boolean;
  log?: (line: string) => void;
}

/** One invocation of the synthetic history, as the runner would hand it to the ledger's writer. */
export interface GeneratedInvocation {
  /** Index into `historyHookSets()`. */
  setIndex: number;
  invocation: Invocation;
  startedAt: number;
  result: InvocationResult;
  outcomes: Outcome[];
  finishedAt: number;
}

const noop = () => undefined;

/** Per hook: its behaviour in the generated history (deny/fail/timeout rates, duration distribution). */
interface Behaviour {
  deny?: number;
  denyReason?: ReasonCode;
  denyMessage?: string;
  ask?: number;
  modify?: number;
  allow?: number;
  fail?: number;
  timeout?: number;
  /** Observer returning deny now and then (an observe-only violation). */
  violate?: number;
  /** Median duration µs and spread (log-normal sigma). */
  medianUs: number;
  sigma: number;
}

const BEHAVIOUR: Record<string, Behaviour> = {
  'session-banner': { medianUs: 40, sigma: 0.4 },
  'prompt-secrets': {
    deny: 0.01,
    denyReason: 'safety_violation',
    denyMessage: 'prompt contains what looks like an API key',
    modify: 0.02,
    medianUs: 120,
    sigma: 0.5,
  },
  'no-rm-rf': {
    deny: 0.07,
    denyReason: 'safety_violation',
    denyMessage: 'rm -rf outside the workspace is not allowed',
    medianUs: 60,
    sigma: 0.5,
  },
  'no-force-push': {
    deny: 0.04,
    denyReason: 'policy_violation',
    denyMessage: 'git push --force to a protected branch',
    ask: 0.01,
    medianUs: 80,
    sigma: 0.5,
  },
  'path-guard': {
    deny: 0.04,
    denyReason: 'policy_violation',
    denyMessage: 'path is outside the project directory',
    medianUs: 150,
    sigma: 0.6,
  },
  'secrets-scan': {
    deny: 0.03,
    denyReason: 'safety_violation',
    denyMessage: 'content contains a private key',
    modify: 0.02,
    medianUs: 14_000,
    sigma: 0.5,
    fail: 0.002,
    timeout: 0.0005,
  },
  'schema-check': {
    deny: 0.02,
    denyReason: 'schema_violation',
    denyMessage: 'tool input does not match the tool schema',
    medianUs: 900,
    sigma: 0.4,
  },
  'egress-policy': {
    deny: 0.06,
    denyReason: 'policy_violation',
    denyMessage: 'domain is not on the allow list',
    allow: 0.5,
    medianUs: 42_000,
    sigma: 0.7,
    fail: 0.02,
    timeout: 0.004,
  },
  'slow-linter': { medianUs: 220_000, sigma: 0.9, fail: 0.01, timeout: 0.003 },
  'cost-watch': { medianUs: 30, sigma: 0.3, violate: 0.001 },
  'result-scan': { medianUs: 2_500, sigma: 0.6, fail: 0.001 },
  'audit-log': { medianUs: 1_800, sigma: 0.8, fail: 0.0005 },
  'otel-export': { medianUs: 3_000, sigma: 0.6, fail: 0.003, timeout: 0.0002 },
  'tool-budget': { medianUs: 50, sigma: 0.4 },
  'context-inject': { medianUs: 400, sigma: 0.5 },
};

function hookSet(version: string, extra: boolean): HookSet {
  const g = { capability: 'guardrail' } as const;
  return defineHooks({
    name: 'team-guardrails',
    version,
    hooks: [
      { id: 'session-banner', point: ['session_start', 'session_end'], run: noop },
      { id: 'prompt-secrets', point: 'user_prompt_submit', ...g, priority: 10, run: noop },
      { id: 'no-rm-rf', point: 'pre_tool_use', match: 'Bash', ...g, priority: 10, run: noop },
      { id: 'no-force-push', point: 'pre_tool_use', match: 'Bash', ...g, priority: 20, run: noop },
      { id: 'path-guard', point: 'pre_tool_use', match: 'Read|Write|Edit|Glob|Grep', ...g, priority: 10, run: noop },
      { id: 'secrets-scan', point: 'pre_tool_use', match: 'Write|Edit', ...g, priority: 30, run: noop },
      { id: 'schema-check', point: 'pre_tool_use', ...g, priority: 5, run: noop },
      { id: 'egress-policy', point: 'pre_tool_use', match: 'WebFetch|WebSearch|Bash', ...g, priority: 40, timeoutMs: 2000, run: noop },
      ...(extra ? [{ id: 'slow-linter', point: 'post_tool_use' as const, match: 'Write|Edit', timeoutMs: 3000, run: noop }] : []),
      { id: 'cost-watch', point: ['pre_tool_use', 'user_prompt_submit', 'post_tool_use'], priority: 1, run: noop },
      { id: 'result-scan', point: ['post_tool_use', 'post_tool_use_failure'], run: noop },
      { id: 'tool-budget', point: ['pre_tool_use', 'post_tool_use'], priority: 200, run: noop },
      { id: 'context-inject', point: ['user_prompt_submit', 'session_start'], priority: 50, run: noop },
      {
        id: 'otel-export',
        point: ['session_start', 'session_end', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'post_tool_use_failure', 'stop'],
        mode: 'background',
        timeoutMs: 1000,
        run: noop,
      },
      {
        id: 'audit-log',
        point: ['session_start', 'session_end', 'user_prompt_submit', 'pre_tool_use', 'post_tool_use', 'post_tool_use_failure', 'stop'],
        mode: 'background',
        run: noop,
      },
    ],
  });
}

const TOOLS: [string, number][] = [
  ['Bash', 0.34],
  ['Read', 0.24],
  ['Edit', 0.14],
  ['Write', 0.07],
  ['Grep', 0.08],
  ['Glob', 0.06],
  ['WebFetch', 0.03],
  ['WebSearch', 0.02],
  ['Task', 0.02],
];
const COMMANDS = [
  'npm test',
  'git status',
  'ls -la',
  'rm -rf node_modules',
  'git push origin main',
  'npx tsc --noEmit',
  'cat package.json',
  'git diff',
  'curl https://example.com',
];
const FILES = ['src/index.ts', 'src/app.ts', 'README.md', 'package.json', 'test/app.test.ts', 'src/lib/util.ts', '.env'];

/** The three versions of the hook set the history was recorded with (the history's `setIndex` indexes this). */
export function historyHookSets(): HookSet[] {
  return [hookSet('1', false), hookSet('2', true), hookSet('3', true)];
}

/**
 * The synthetic history, oldest first: each invocation with its outcomes and decision, computed
 * as the runner would have, ready for any engine's writer. Deterministic for the same options.
 */
export function* syntheticHistory(options: HistoryOptions, sets: HookSet[] = historyHookSets()): Generator<GeneratedInvocation> {
  const random = seededRandom(options.seed);
  const end = options.end ?? Date.now();
  const start = end - options.days * 86_400_000;
  let invocationCount = 0;

  const pick = <T>(items: [T, number][]): T => {
    let r = random();
    for (const [item, weight] of items) if ((r -= weight) < 0) return item;
    return items[items.length - 1]![0];
  };
  const logNormal = (median: number, sigma: number) => {
    const u = Math.max(1e-12, random());
    const v = random();
    return Math.max(1, Math.round(median * Math.exp(sigma * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v))));
  };

  // Sessions start in time order, spread evenly; each emits its events a few seconds apart.
  // Concurrent sessions interleave, as several agents write one ledger.
  interface Session {
    id: string;
    at: number;
    left: number;
    turn: number;
    pendingPost: { toolName: string; toolUseId: string; input: unknown } | null;
    started: boolean;
    setIndex: number;
  }
  const sessionGap = (end - start) / options.sessions;
  let nextSession = 0;
  const active: Session[] = [];
  // Session lengths vary (half to one and a half times the mean) but add up to exactly the total.
  const weights = Array.from({ length: options.sessions }, () => 0.5 + random());
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const lengths = weights.map((w) => Math.max(4, Math.floor((w / weightSum) * options.invocations)));
  lengths[lengths.length - 1]! += Math.max(0, options.invocations - lengths.reduce((a, b) => a + b, 0));
  const newSession = (): Session => {
    const at = start + nextSession * sessionGap + random() * sessionGap * 0.5;
    const s: Session = {
      id: `sess-${(options.seed * 1_000_003 + nextSession).toString(36)}-${Math.floor(random() * 1e9).toString(36)}`,
      at,
      left: lengths[nextSession] ?? 4,
      turn: 0,
      pendingPost: null,
      started: false,
      setIndex: Math.min(2, Math.floor(((at - start) / (end - start)) * 3)),
    };
    nextSession += 1;
    return s;
  };

  const nextEvent = (s: Session, last: boolean): Invocation => {
    const base = { sessionId: s.id, agent: 'claude-code', cwd: '/home/dev/app' };
    let input: Record<string, unknown>;
    if (!s.started) {
      s.started = true;
      input = { ...base, point: 'session_start', eventName: 'SessionStart' };
    } else if (last) {
      input = { ...base, point: 'session_end', eventName: 'SessionEnd' };
    } else if (s.pendingPost) {
      const p = s.pendingPost;
      s.pendingPost = null;
      const failed = random() < 0.03;
      input = {
        ...base,
        point: failed ? 'post_tool_use_failure' : 'post_tool_use',
        eventName: failed ? 'PostToolUseFailure' : 'PostToolUse',
        turn: s.turn,
        toolName: p.toolName,
        toolUseId: p.toolUseId,
        toolInput: p.input,
        toolResponse: failed ? null : { ok: true, bytes: Math.floor(random() * 5000) },
        error: failed ? 'command exited with status 1' : null,
      };
    } else if (s.turn === 0 || random() < 0.08) {
      s.turn += 1;
      input =
        random() < 0.1
          ? { ...base, point: 'stop', eventName: 'Stop', turn: s.turn }
          : {
              ...base,
              point: 'user_prompt_submit',
              eventName: 'UserPromptSubmit',
              turn: s.turn,
              prompt: `please fix the failing test number ${Math.floor(random() * 100)}`,
            };
    } else {
      const toolName = pick(TOOLS);
      const toolUseId = `toolu_${Math.floor(random() * 2 ** 52).toString(36)}${invocationCount.toString(36)}`;
      const toolInput =
        toolName === 'Bash'
          ? { command: COMMANDS[Math.floor(random() * COMMANDS.length)], description: 'run a command' }
          : toolName === 'WebFetch' || toolName === 'WebSearch'
            ? { url: `https://docs.example.com/page/${Math.floor(random() * 500)}`, prompt: 'summarise' }
            : toolName === 'Edit'
              ? {
                  file_path: `/home/dev/app/${FILES[Math.floor(random() * FILES.length)]}`,
                  old_string: 'const a = 1;',
                  new_string: 'const a = 2;',
                }
              : { file_path: `/home/dev/app/${FILES[Math.floor(random() * FILES.length)]}` };
      s.pendingPost = { toolName, toolUseId, input: toolInput };
      input = { ...base, point: 'pre_tool_use', eventName: 'PreToolUse', turn: s.turn, toolName, toolUseId, toolInput };
    }
    const invocation = normaliseInvocation(input as Parameters<typeof normaliseInvocation>[0]);
    invocation.raw = {
      session_id: s.id,
      transcript_path: `/home/dev/.claude/projects/app/${s.id}.jsonl`,
      cwd: '/home/dev/app',
      hook_event_name: invocation.eventName,
      ...(invocation.toolName
        ? { tool_name: invocation.toolName, tool_input: invocation.toolInput, tool_use_id: invocation.toolUseId }
        : {}),
      ...(invocation.prompt ? { prompt: invocation.prompt } : {}),
    };
    return invocation;
  };

  const decide = (setIndex: number, inv: Invocation, at: number): GeneratedInvocation => {
    const set = sets[setIndex]!;
    const matched = set.hooks
      .map((hook, i) => ({ hook, i }))
      .filter(({ hook }) => hook.points.includes(inv.point) && hook.matches(inv.point, inv.toolName));
    const registrationIndex = new Map<string, number>();
    for (const point of [inv.point]) {
      let k = 0;
      for (const hook of set.hooks) if (hook.points.includes(point)) registrationIndex.set(hook.id, k++);
    }
    const foreground = matched.filter((m) => m.hook.mode === 'foreground').sort((a, b) => a.hook.priority - b.hook.priority || a.i - b.i);
    const background = matched.filter((m) => m.hook.mode === 'background');
    const outcomes: Outcome[] = [];
    let decision: Decision = 'none';
    let decisive: Outcome | null = null;
    let reasonCode: ReasonCode | null = null;
    let message: string | null = null;
    let modifiedInput: unknown = null;
    let endedBy: string | null = null;
    let clock = at;
    let totalUs = 0;
    // The runner's own blank outcome, so generated rows have exactly the live path's shape.
    const blank = (hook: ResolvedHook): Outcome => ({
      ...blankOutcome({ hook, registrationIndex: registrationIndex.get(hook.id) ?? 0 }, inv.point),
      status: 'skipped',
    });
    const run = (hook: ResolvedHook, order: number): Outcome => {
      const b = BEHAVIOUR[hook.id]!;
      const o = blank(hook);
      o.executionOrder = order;
      o.startedAt = Math.round(clock);
      const r = random();
      let edge = 0;
      if (r < (edge += b.timeout ?? 0)) {
        o.status = 'timed_out';
        o.failureReason = 'timeout';
        o.failureDetail = `no answer within ${hook.timeoutMs}ms`;
        o.durationUs = hook.timeoutMs * 1000 + Math.floor(random() * 3000);
      } else if (r < (edge += b.fail ?? 0)) {
        o.status = 'failed';
        o.failureReason = 'execution_failed';
        o.failureDetail = 'exit code 1: Error: connect ECONNREFUSED 10.0.0.7:443';
        o.durationUs = logNormal(b.medianUs / 3, b.sigma);
      } else {
        o.status = 'completed';
        o.durationUs = Math.min(hook.timeoutMs * 1000, logNormal(b.medianUs, b.sigma));
        if (r < (edge += b.deny ?? 0)) {
          o.decision = 'deny';
          o.reasonCode = b.denyReason ?? 'policy_violation';
          o.message = b.denyMessage ?? 'denied';
        } else if (r < (edge += b.ask ?? 0)) {
          o.decision = 'ask';
          o.message = 'confirm this with the user first';
        } else if (r < (edge += b.modify ?? 0)) {
          o.decision = 'modify';
          o.modifiedInput = inv.point === 'user_prompt_submit' ? '[redacted prompt]' : { ...(inv.toolInput as object), sanitized: true };
          o.message = 'sanitised the input';
        } else if (r < (edge += b.allow ?? 0)) {
          o.decision = 'allow';
        } else if (r < edge + (b.violate ?? 0)) {
          o.decision = 'deny';
          o.message = 'this looks expensive';
          o.failureReason = 'observe_only_violation';
          o.failureDetail = 'an observer returned deny; observers may only watch (declare capability "guardrail" to decide)';
        } else {
          o.decision = 'none';
        }
      }
      clock += o.durationUs / 1000;
      totalUs += o.durationUs;
      return o;
    };
    let order = 0;
    for (const { hook } of foreground) {
      if (endedBy) {
        const o = blank(hook);
        o.skipReason = 'pass_ended';
        o.skippedBy = endedBy;
        outcomes.push(o);
        continue;
      }
      const o = run(hook, order++);
      outcomes.push(o);
      const failedClosed = (o.status === 'failed' || o.status === 'timed_out') && hook.onFailure === 'deny';
      if (failedClosed) {
        if (decisive) decisive.decisive = false;
        o.decisive = true;
        decisive = o;
        decision = 'deny';
        reasonCode = o.status === 'timed_out' ? 'timeout' : 'runtime_error';
        message = `hook ${hook.id} failed (${o.failureReason}); failing closed`;
        endedBy = hook.id;
      } else if (hook.capability === 'guardrail' && o.status === 'completed' && o.decision && o.decision !== 'none') {
        if (o.decision === 'modify') {
          modifiedInput = o.modifiedInput;
        } else {
          const rank = { none: 0, allow: 1, ask: 2, deny: 3 } as const;
          if (rank[o.decision] > rank[decision]) {
            if (decisive) decisive.decisive = false;
            o.decisive = true;
            decisive = o;
            decision = o.decision;
            reasonCode = o.decision === 'deny' ? o.reasonCode : null;
            message = o.message;
          }
          if (o.decision === 'deny') endedBy = hook.id;
        }
      }
    }
    for (const { hook } of background) {
      if (decision === 'deny') {
        const o = blank(hook);
        o.skipReason = 'denied';
        o.skippedBy = endedBy;
        outcomes.push(o);
      } else {
        outcomes.push(run(hook, order++));
      }
    }
    const result: InvocationResult = {
      decision,
      decisiveHookId: decisive?.hookId ?? null,
      reasonCode,
      message,
      modifiedInput,
      additionalContext: [],
      durationUs: totalUs + 150,
    };
    // The history is synthetic, so the finish time follows its clock, not the wall clock. It is
    // given to finish() so the chain link covers it: rewriting it afterwards would break verify.
    return { setIndex, invocation: inv, startedAt: at, result, outcomes, finishedAt: at + Math.trunc(result.durationUs / 1000) };
  };

  while (invocationCount < options.invocations) {
    while (active.length < 4 && nextSession < options.sessions) active.push(newSession());
    if (active.length === 0) active.push(newSession());
    // The session with the earliest next event goes next, so times and ids stay in step.
    let index = 0;
    for (let k = 1; k < active.length; k++) if (active[k]!.at < active[index]!.at) index = k;
    const s = active[index]!;
    const remaining = options.invocations - invocationCount;
    const last = s.left <= 1 || remaining <= 1;
    const inv = nextEvent(s, last);
    s.left -= 1;
    s.at += 500 + random() * 8000;
    if (last) active.splice(index, 1);
    const generated = decide(s.setIndex, inv, Math.round(s.at));
    invocationCount += 1;
    yield generated;
  }
}

/** Writes the synthetic history into a new SQLite ledger at `options.out` (replacing any file there). */
export function generateLedger(options: GenerateOptions): { invocations: number; outcomes: number; seconds: number; bytes: number } {
  const log = options.log ?? (() => {});
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(options.out + suffix)) rmSync(options.out + suffix);
  const ledger = SqliteLedger.open({ path: options.out });
  // A bulk load: nothing else is reading, so trade crash safety for speed while generating.
  ledger.sqlite.pragma('synchronous = OFF');
  ledger.sqlite.pragma('cache_size = -262144');
  // Tamper-evidence links cost more than the rest of the write; reports never read them.
  const writer = new LedgerWriter(ledger, { chain: options.chain ?? false });
  const sets = historyHookSets();
  const setIds = sets.map((s) => writer.hookSetId(s));
  const history = syntheticHistory(options, sets);
  const t0 = process.hrtime.bigint();
  let invocationCount = 0;
  let outcomeCount = 0;
  const batch = ledger.sqlite.transaction((count: number) => {
    for (let n = 0; n < count; n++) {
      const next = history.next();
      if (next.done) return;
      const g = next.value;
      const id = writer.begin(setIds[g.setIndex]!, g.invocation, g.startedAt);
      writer.finish(id, g.result, g.outcomes, g.finishedAt);
      invocationCount += 1;
      outcomeCount += g.outcomes.length;
    }
  });

  // Bulk-load practice: secondary indexes are dropped during the load and rebuilt after it
  // (one sort each instead of millions of random b-tree inserts). Same schema at the end.
  const indexes = ledger.sqlite
    .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('invocations', 'outcomes')`)
    .all() as { name: string; sql: string }[];
  if (options.keepIndexes !== true) for (const { name } of indexes) ledger.sqlite.exec(`DROP INDEX ${name}`);
  const chunk = 20_000;
  while (invocationCount < options.invocations) {
    batch(chunk);
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    log(`  ${invocationCount.toLocaleString('en')} invocations, ${outcomeCount.toLocaleString('en')} outcomes, ${seconds.toFixed(1)}s`);
  }
  if (options.keepIndexes !== true) {
    for (const { name, sql } of indexes) {
      ledger.sqlite.exec(sql);
      log(`  index ${name} rebuilt, ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)}s`);
    }
  }
  // What writers do hour by hour as they commit (ledger/rollup-upkeep.ts), for the whole history at once.
  catchUpRollup(ledger);
  log(`  hook-health rollup built, ${(Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1)}s`);
  ledger.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  ledger.close();
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  return { invocations: invocationCount, outcomes: outcomeCount, seconds, bytes: statSync(options.out).size };
}

/** The command line (see the file comment). */
async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: '/tmp/hookledger-1m.db' },
      db: { type: 'string' },
      invocations: { type: 'string', default: '1000000' },
      sessions: { type: 'string', default: '5000' },
      days: { type: 'string', default: '90' },
      seed: { type: 'string', default: '1' },
      chain: { type: 'boolean', default: false },
      'keep-indexes': { type: 'boolean', default: false },
      writer: { type: 'string' },
    },
  });
  const target = values.db ?? values.out!;
  const history = {
    invocations: Number(values.invocations),
    sessions: Number(values.sessions),
    days: Number(values.days),
    seed: Number(values.seed),
  };
  const log = (line: string) => console.log(line);
  const postgres = /^postgres(ql)?:\/\//i.test(target);
  console.log(
    `generating ${history.invocations.toLocaleString('en')} invocations in ${history.sessions} sessions over ${history.days} days → ${postgres ? new URL(target).host + new URL(target).pathname : target}`,
  );
  try {
    // PostgreSQL is always chained: its links cost little next to the load, and verify must pass on it.
    const r = postgres
      ? await (
          await import('./generate-ledger-postgres.js')
        ).generatePostgresLedger({ ...history, url: target, writer: values.writer, log })
      : generateLedger({ ...history, out: target, chain: values.chain, keepIndexes: values['keep-indexes'], log });
    console.log(
      `done: ${r.invocations.toLocaleString('en')} invocations, ${r.outcomes.toLocaleString('en')} outcomes (${(r.outcomes / r.invocations).toFixed(2)} per invocation) in ${r.seconds.toFixed(1)}s; ` +
        `${(r.bytes / 1e6).toFixed(1)} MB on disk, ${Math.round(r.bytes / r.invocations)} bytes per invocation`,
    );
  } catch (error) {
    process.stderr.write(`generate:ledger: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}

// Not awaited at the top level: generate-ledger-postgres.ts imports this module, which must finish loading first.
if (import.meta.url === `file://${process.argv[1]}`) void main();
