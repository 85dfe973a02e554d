import { fileURLToPath } from 'node:url';
/**
 * Bad input (reliability item 7). Throws malformed input at the Claude Code adapter's stdin
 * and at the HTTP JSON API: invalid JSON, wrong types, deep nesting, huge strings, invalid
 * UTF-8, unknown events, mutated real payloads. Checks every answer: never a crash or a stack
 * trace; a failure is one clear line (stdin) or one `{"error":{"code","message"}}` body
 * (HTTP, status < 500); a blocking event hookledger could not decide gets the documented
 * decision (deny, in that event's format). Afterwards `hookledger verify` and integrity_check
 * must pass on the ledger everything was recorded in.
 *
 * The stdin bulk calls the adapter's command path (`decideClaudeCommand`, what `hookledger
 * claude` runs minus printing) in-process; a sample also goes through real `hookledger
 * claude` processes. The HTTP inputs go to one real `hookledger serve` process.
 *
 *   npm run fuzz -- [--stdin 10000] [--processes 100] [--http 10000] [--seed 1]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decideClaudeCommand } from '../src/adapters/claude.js';
import { isBlockingEvent, type ClaudeAnswer } from '../src/adapters/claude-output.js';
import { claudeEventNameOf } from '../src/adapters/claude-input.js';
import { openLedger } from '../src/ledger/open.js';
import fuzzHooks from './fuzz-hooks.js';
import { onLines, option, printTable, root, tsxLoader } from './reliability-support.js';
import { seededRandom } from './bench-support.js';

const entry = join(root, 'src/cli/bin.ts');
const hooksFile = join(root, 'scripts/fuzz-hooks.ts');
const fixturesDir = fileURLToPath(new URL('../test/fixtures/claude-code', import.meta.url));
const FUZZ_TOKEN = 'fuzz-token-0123456789abcdef';
const MAX_BODY_BYTES = 2 * 1024 * 1024;

// ---------------------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------------------

interface FuzzInput {
  kind: string;
  body: Buffer;
}

const EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PermissionRequest',
  'UserPromptSubmit',
  'Stop',
  'SessionStart',
  'Notification',
  'TaskCompleted',
  'Elicitation',
];

function loadSeeds(): Record<string, unknown>[] {
  const seeds: Record<string, unknown>[] = [];
  try {
    for (const f of readdirSync(fixturesDir).filter((n) => n.endsWith('.json')))
      seeds.push(JSON.parse(readFileSync(join(fixturesDir, f), 'utf8')) as Record<string, unknown>);
  } catch {
    // Without the shared fixtures the generator falls back to a built-in payload.
  }
  if (seeds.length === 0)
    seeds.push({ session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, cwd: '/tmp' });
  return seeds;
}

/** Builds malformed inputs. `canonical` mutates canonical invocations (the JSON API) instead of Claude payloads. */
class Generator {
  private readonly seeds = loadSeeds();
  constructor(private readonly rand: () => number) {}

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.rand() * items.length)]!;
  }
  private int(max: number): number {
    return Math.floor(this.rand() * max);
  }
  private weird(): unknown {
    return this.pick<() => unknown>([
      () => 42,
      () => -1.5e308,
      () => true,
      () => null,
      () => [],
      () => [1, 'two', { three: 3 }],
      () => ({}),
      () => ({ nested: { deeper: [null] } }),
      () => '',
      () => ' ',
      () => '\u0000\u0001\u001f',
      () => '\ud800 lone surrogate',
      () => '🙂'.repeat(50),
      () => 'x'.repeat(this.int(5000)),
      () => '__proto__',
      () => ({ __proto__: { polluted: true }, constructor: { prototype: { x: 1 } } }),
      () => Number.POSITIVE_INFINITY, // what 1e400 in JSON text parses to
    ])();
  }
  private base(canonical: boolean): Record<string, unknown> {
    if (canonical) {
      return {
        point: this.pick(['pre_tool_use', 'post_tool_use', 'user_prompt_submit', 'stop', 'run_started']),
        sessionId: 's-fuzz',
        toolName: 'Bash',
        toolInput: { command: this.pick(['ls', 'rm -rf /']) },
      };
    }
    return structuredClone(this.pick(this.seeds));
  }

  next(canonical: boolean): FuzzInput {
    const roll = this.rand();
    const text = (kind: string, s: string): FuzzInput => ({ kind, body: Buffer.from(s, 'utf8') });
    if (roll < 0.15) {
      // Invalid JSON: truncated, garbage, JS-isms.
      const valid = JSON.stringify(this.base(canonical));
      return text(
        'invalid-json',
        this.pick([
          () => valid.slice(0, this.int(valid.length)),
          () => `${valid}}`,
          () => `${valid} trailing`,
          () => valid.replace(/"/g, "'"),
          () => `// comment\n${valid}`,
          () => '{"a": NaN}',
          () => '{"a": undefined}',
          () => '',
          () => '   \n\t ',
          () => 'null',
          () => '[]',
          () => '"just a string"',
          () => '12345',
          () => '{',
          () => '{"hook_event_name":',
          () => String.fromCharCode(...Array.from({ length: 64 }, () => this.int(256))),
        ])(),
      );
    }
    if (roll < 0.3) {
      // Wrong types in known fields.
      const value = this.base(canonical);
      const fields = canonical
        ? ['point', 'sessionId', 'turn', 'toolName', 'toolUseId', 'prompt', 'meta', 'agent', 'cwd', 'eventName']
        : ['hook_event_name', 'session_id', 'tool_name', 'tool_use_id', 'cwd', 'prompt', 'permission_mode', 'agent_id', 'tool_input'];
      for (let i = 0; i <= this.int(3); i++) value[this.pick(fields)] = this.weird();
      return text('wrong-types', JSON.stringify(value));
    }
    if (roll < 0.4) {
      // Deep nesting, in a field or as the whole document.
      const depth = this.pick([100, 1000, 10_000, 100_000]);
      const open = this.pick(['[', '{"a":']);
      const close = open === '[' ? ']' : '}';
      const nested = `${open.repeat(depth)}1${close.repeat(depth)}`;
      if (this.rand() < 0.3) return text('deep-nesting', nested);
      const value = JSON.stringify(this.base(canonical));
      const field = canonical ? 'toolInput' : 'tool_input';
      return text('deep-nesting', `${value.slice(0, -1)},"${field}":${nested}}`);
    }
    if (roll < 0.44) {
      // Huge strings (rare: each one is recorded when it validates).
      const value = this.base(canonical);
      const size = this.pick([100_000, 1_000_000, 3_000_000]);
      const field = this.pick(canonical ? ['prompt', 'sessionId', 'toolName'] : ['prompt', 'session_id', 'tool_name', 'cwd']);
      value[field] = 'h'.repeat(size);
      return text('huge-string', JSON.stringify(value));
    }
    if (roll < 0.55) {
      // Invalid UTF-8 inside otherwise valid JSON.
      const valid = Buffer.from(JSON.stringify(this.base(canonical)), 'utf8');
      const bad = [
        Buffer.from([0xff]),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
        Buffer.from([0xe2, 0x82]),
      ];
      const at = 1 + this.int(valid.length - 2);
      return { kind: 'invalid-utf8', body: Buffer.concat([valid.subarray(0, at), this.pick(bad), valid.subarray(at)]) };
    }
    if (roll < 0.7) {
      // Unknown events / points.
      const value = this.base(canonical);
      if (canonical) value.point = this.pick(['PreToolUse', 'pre-tool-use', 'unknown_point', '', 'other', 'PRE_TOOL_USE']);
      else
        value.hook_event_name = this.pick(['FutureEvent', 'pretooluse', '', 'PreToolUse ', '__proto__', 'constructor', 'toString', '💥']);
      return text('unknown-event', JSON.stringify(value));
    }
    // Mutations of a real payload: fields removed, renamed, added, events swapped.
    const value = this.base(canonical);
    const keys = Object.keys(value);
    for (let i = 0; i <= this.int(4); i++) {
      const op = this.int(4);
      const key = this.pick(keys);
      if (op === 0) delete value[key];
      else if (op === 1) value[`${key}_${this.int(9)}`] = value[key];
      else if (op === 2) value[this.pick(['extra', 'hookledger', 'tool_input', 'toolInput', '__proto__'])] = this.weird();
      else if (!canonical) value.hook_event_name = this.pick(EVENTS);
    }
    return text('mutated', JSON.stringify(value));
  }
}

// ---------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------

/** Whether a Claude answer blocks, in whatever form its event uses. */
function blocks(answer: { exitCode: number; json: Record<string, unknown> }): boolean {
  if (answer.exitCode === 2) return true;
  const json = answer.json as {
    decision?: unknown;
    continue?: unknown;
    hookSpecificOutput?: { permissionDecision?: unknown; decision?: { behavior?: unknown }; action?: unknown };
  };
  return (
    json.decision === 'block' ||
    json.continue === false ||
    json.hookSpecificOutput?.permissionDecision === 'deny' ||
    json.hookSpecificOutput?.decision?.behavior === 'deny' ||
    json.hookSpecificOutput?.action === 'decline'
  );
}

const STACK = /\n\s+at |\bat .*\(.*:\d+:\d+\)/;

interface Tally {
  inputs: number;
  decided: number;
  refused: number;
  blockedUndecided: number;
  problems: string[];
}

const tally = (): Tally => ({ inputs: 0, decided: 0, refused: 0, blockedUndecided: 0, problems: [] });

function eventOf(body: Buffer): string | null {
  try {
    return claudeEventNameOf(JSON.parse(body.toString('utf8')));
  } catch {
    return null;
  }
}

/** One stdin answer against the contract. */
function checkClaudeAnswer(
  t: Tally,
  input: FuzzInput,
  answer: Pick<ClaudeAnswer, 'json' | 'stderr'> & { exitCode: number },
  decided: boolean,
): void {
  t.inputs += 1;
  const fail = (why: string): void => void t.problems.push(`${input.kind}: ${why}`);
  let printed: string;
  try {
    printed = JSON.stringify(answer.json);
  } catch (error) {
    return fail(`answer cannot be printed: ${(error as Error).message}`);
  }
  if (printed.includes('\n')) fail('answer JSON spans lines');
  if (answer.exitCode !== 0 && answer.exitCode !== 2) fail(`exit code ${answer.exitCode}`);
  if (decided) {
    t.decided += 1;
    return;
  }
  t.refused += 1;
  if (answer.stderr === null || answer.stderr.trim() === '') fail('an undecided input without an error line');
  else if (answer.stderr.trim().includes('\n') || STACK.test(answer.stderr)) fail(`error is not one line: ${answer.stderr.slice(0, 200)}`);
  const event = eventOf(input.body);
  if (event === null || isBlockingEvent(event)) {
    if (blocks(answer)) t.blockedUndecided += 1;
    else fail(`undecided ${event ?? '(no event)'} was not blocked: ${printed.slice(0, 200)}`);
  }
}

// ---------------------------------------------------------------------------------------
// Targets
// ---------------------------------------------------------------------------------------

async function fuzzStdinInProcess(db: string, count: number, gen: Generator): Promise<Tally> {
  const t = tally();
  const ledger = openLedger({ path: db });
  try {
    for (let i = 0; i < count; i++) {
      const input = gen.next(false);
      let result;
      try {
        result = await decideClaudeCommand({
          // What readAll does with stdin bytes: decode as UTF-8 (invalid sequences become U+FFFD).
          input: Promise.resolve(input.body.toString('utf8')),
          loadHookSet: async () => fuzzHooks,
          openLedger: () => ledger,
          policy: 'deny',
        });
        await result.finish(0);
      } catch (error) {
        t.inputs += 1;
        t.problems.push(`${input.kind}: decideClaudeCommand threw: ${(error as Error).message}`);
        continue;
      }
      checkClaudeAnswer(t, input, result.answer, result.report !== null);
      if ((i + 1) % 2000 === 0) process.stderr.write(`  stdin (in-process): ${i + 1}/${count}\n`);
    }
  } finally {
    ledger.close();
  }
  return t;
}

function runProcess(
  args: string[],
  input: Buffer,
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsxLoader, entry, ...args], {
      cwd: root,
      env: { ...process.env, NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

async function fuzzStdinProcesses(db: string, count: number, gen: Generator, parallel = 4): Promise<Tally> {
  const t = tally();
  const inputs = Array.from({ length: count }, () => gen.next(false));
  let next = 0;
  const worker = async () => {
    while (next < inputs.length) {
      const input = inputs[next++]!;
      const r = await runProcess(['claude', '--config', hooksFile, '--db', db], input.body);
      const fail = (why: string) => t.problems.push(`process ${input.kind}: ${why}`);
      if (r.signal !== null) {
        t.inputs += 1;
        fail(`killed by ${r.signal}`);
        continue;
      }
      const lines = r.stdout.split('\n').filter((l) => l !== '');
      let json: Record<string, unknown> = {};
      if (lines.length !== 1) fail(`expected one JSON line on stdout, got ${lines.length}`);
      else {
        try {
          json = JSON.parse(lines[0]!) as Record<string, unknown>;
        } catch {
          fail(`stdout is not JSON: ${lines[0]!.slice(0, 100)}`);
        }
      }
      const errLines = r.stderr.split('\n').filter((l) => l.trim() !== '');
      // Decided answers print no error; an undecided one prints the reason (one line).
      const undecided =
        errLines.some((l) => l.startsWith('hookledger')) || (r.code === 2 && errLines.length > 0 && eventOf(input.body) === null);
      if (errLines.length > 1 || STACK.test(r.stderr)) fail(`stderr is not one line: ${r.stderr.slice(0, 200)}`);
      checkClaudeAnswer(t, input, { exitCode: r.code ?? -1, json, stderr: errLines[0] ?? null }, !undecided);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return t;
}

function httpRequest(
  port: number,
  token: string,
  method: string,
  path: string,
  body: Buffer | null,
  contentType = 'application/json',
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': contentType, 'content-length': body.length } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body ?? undefined);
  });
}

async function fuzzHttp(
  db: string,
  count: number,
  gen: Generator,
  rand: () => number,
): Promise<{ api: Tally; claude: Tally; serverAlive: boolean; serverStderr: string }> {
  const api = tally();
  const claude = tally();
  const server = spawn(
    process.execPath,
    [
      '--import',
      tsxLoader,
      entry,
      'serve',
      '--config',
      hooksFile,
      '--db',
      db,
      '--port',
      '0',
      '--token',
      FUZZ_TOKEN,
      '--max-body-bytes',
      String(MAX_BODY_BYTES),
      '--json',
    ],
    { cwd: root, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let serverStderr = '';
  server.stderr.on('data', (c: Buffer) => (serverStderr += c.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    onLines(server, (line) => {
      try {
        const info = JSON.parse(line) as { port?: number; url?: string };
        if (info.port) resolve(info.port);
        else if (info.url) resolve(Number(new URL(info.url).port));
      } catch {
        // not the address line
      }
    });
    server.once('exit', (code) => reject(new Error(`serve exited ${code}: ${serverStderr}`)));
  });
  let exited = false;
  server.once('exit', () => (exited = true));
  try {
    for (let i = 0; i < count; i++) {
      const toClaude = i % 2 === 1;
      const t = toClaude ? claude : api;
      const input = gen.next(!toClaude);
      const path = toClaude ? '/claude' : '/v1/invocations';
      const contentType = rand() < 0.05 ? 'text/plain' : 'application/json';
      let res: { status: number; body: string };
      try {
        res = await httpRequest(port, FUZZ_TOKEN, 'POST', path, input.body, contentType);
      } catch (error) {
        t.inputs += 1;
        // An oversized body is answered 413 and the connection closed while we may still be writing.
        const code = (error as NodeJS.ErrnoException).code;
        if (input.body.length > MAX_BODY_BYTES && (code === 'EPIPE' || code === 'ECONNRESET')) {
          t.refused += 1;
          continue;
        }
        t.problems.push(`${path} ${input.kind}: request failed: ${(error as Error).message}`);
        if (exited) break;
        continue;
      }
      t.inputs += 1;
      const fail = (why: string) => t.problems.push(`${path} ${input.kind}: ${why}`);
      let json: Record<string, unknown>;
      try {
        json = JSON.parse(res.body) as Record<string, unknown>;
      } catch {
        fail(`HTTP ${res.status}: body is not JSON: ${res.body.slice(0, 100)}`);
        continue;
      }
      if (res.status >= 500) fail(`HTTP ${res.status}: ${res.body.slice(0, 200)}`);
      if (STACK.test(res.body)) fail('a stack trace in the body');
      if (res.status === 200) {
        t.decided += 1;
        if (toClaude) {
          // /claude answers 200 with Claude's own format, decided or not.
          const event = eventOf(input.body);
          const undecided = typeof json.systemMessage === 'string' && json.systemMessage.startsWith('hookledger could not decide');
          const reason = JSON.stringify(json);
          const couldNot = undecided || reason.includes('hookledger could not decide');
          if (couldNot) {
            t.decided -= 1;
            t.refused += 1;
            if (event === null || isBlockingEvent(event)) {
              if (blocks({ exitCode: 0, json })) t.blockedUndecided += 1;
              else fail(`undecided ${event ?? '(no event)'} was not blocked: ${reason.slice(0, 200)}`);
            }
          }
        }
      } else {
        t.refused += 1;
        const error = json.error as { code?: unknown; message?: unknown } | undefined;
        if (typeof error?.code !== 'string' || typeof error.message !== 'string')
          fail(`HTTP ${res.status} without {"error":{code,message}}`);
        else if (error.message.includes('\n')) fail('error message spans lines');
      }
      if ((i + 1) % 2000 === 0) process.stderr.write(`  http: ${i + 1}/${count}\n`);
    }
    // Methods and paths nobody should send.
    for (const [method, path] of [
      ['GET', '/claude'],
      ['DELETE', '/v1/invocations'],
      ['POST', '/nope'],
      ['GET', '/v1/invocations/%ZZ'],
      ['GET', '/v1/denials?limit=-5&since=yesterday'],
    ] as const) {
      const res = await httpRequest(port, FUZZ_TOKEN, method, path, null);
      api.inputs += 1;
      api.refused += 1;
      if (res.status >= 500 || STACK.test(res.body)) api.problems.push(`${method} ${path}: HTTP ${res.status} ${res.body.slice(0, 100)}`);
    }
    const health = await httpRequest(port, FUZZ_TOKEN, 'GET', '/healthz', null).catch(() => ({ status: 0, body: '' }));
    return { api, claude, serverAlive: !exited && health.status === 200, serverStderr };
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => (exited ? resolve(undefined) : server.once('exit', resolve)));
  }
}

// ---------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const stdinCount = Number(option('stdin', '10000'));
  const processCount = Number(option('processes', '100'));
  const httpCount = Number(option('http', '10000'));
  const seed = Number(option('seed', String(Date.now() % 100000)));
  const rand = seededRandom(seed);
  const gen = new Generator(rand);
  const dir = mkdtempSync(join(tmpdir(), 'hookledger-fuzz-'));
  const db = join(dir, 'ledger.db');
  console.log(
    `fuzz: ${stdinCount} stdin inputs in-process, ${processCount} through real \`hookledger claude\` processes, ${httpCount} HTTP requests to \`hookledger serve\`; seed ${seed}`,
  );
  try {
    const t0 = Date.now();
    const stdin = await fuzzStdinInProcess(db, stdinCount, gen);
    const processes = await fuzzStdinProcesses(db, processCount, gen);
    const http = await fuzzHttp(db, httpCount, gen, rand);
    const seconds = (Date.now() - t0) / 1000;

    const verify = await runProcess(['verify', '--db', db], Buffer.alloc(0));
    const ledger = openLedger({ path: db, readonly: true });
    const integrity = String(ledger.sqlite.pragma('integrity_check', { simple: true }));
    const recorded = ledger.sqlite.prepare('SELECT count(*) FROM invocations').pluck().get() as number;
    ledger.close();

    console.log('');
    const rows: [string, Tally][] = [
      ['claude stdin (in-process)', stdin],
      ['claude stdin (processes)', processes],
      ['POST /v1/invocations', http.api],
      ['POST /claude', http.claude],
    ];
    printTable(
      ['target', 'inputs', 'decided', 'refused', 'undecided+blocked', 'problems'],
      rows.map(([name, t]) => [name, t.inputs, t.decided, t.refused, t.blockedUndecided, t.problems.length]),
    );
    const total = rows.reduce((a, [, t]) => a + t.inputs, 0);
    console.log(
      `\n${total} inputs in ${seconds.toFixed(0)} s; ${recorded} invocations recorded; serve alive at the end: ${http.serverAlive ? 'yes' : 'NO'}`,
    );
    console.log(
      `hookledger verify: exit ${verify.code} (${verify.stdout.trim().split('\n')[0] ?? ''}${verify.stderr.trim() ? `; ${verify.stderr.trim()}` : ''}); integrity_check: ${integrity}`,
    );
    const problems = rows.flatMap(([name, t]) => t.problems.map((p) => `${name}: ${p}`));
    const byKind = new Map<string, number>();
    for (const p of problems) byKind.set(p.slice(0, 120), (byKind.get(p.slice(0, 120)) ?? 0) + 1);
    for (const [p, n] of [...byKind].slice(0, 20)) console.log(`  ${n} x ${p}`);
    const serverErrors = http.serverStderr.split('\n').filter((l) => STACK.test(l) || /internal error/.test(l));
    if (serverErrors.length > 0) console.log(`serve stderr: ${serverErrors.slice(0, 3).join(' | ')}`);
    const failed = problems.length > 0 || !http.serverAlive || verify.code !== 0 || integrity !== 'ok' || serverErrors.length > 0;
    console.log(failed ? '\nFAIL' : '\nPASS: no crash, no stack trace, one clear error each, blocking events denied, ledger verified');
    process.exitCode = failed ? 1 : 0;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
