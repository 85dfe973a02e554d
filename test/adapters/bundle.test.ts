import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildClaudeBundle } from '../../scripts/build-bundle.js';
import { runCli } from '../cli-helpers.js';

const fixture = join(import.meta.dirname, '../fixtures/claude-code/01-pretooluse-bash-rm.json');
const input = readFileSync(fixture);

let dir: string;
let launcher: string;
let cacheFile: string;
let hooks: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookledger-bundle-'));
  launcher = await buildClaudeBundle(join(dir, 'dist', 'bundle', 'claude.cjs'));
  cacheFile = `${launcher.replace(/\.cjs$/, '-bundle.cjs')}.cache`;
  // The bundle finds migrations/ at the package root, two levels above it, and better-sqlite3's
  // native addon (its JavaScript is bundled) in node_modules there.
  for (const name of ['migrations', 'node_modules']) symlinkSync(join(import.meta.dirname, '../..', name), join(dir, name));
  hooks = join(dir, 'hooks.json');
  writeFileSync(
    hooks,
    JSON.stringify({
      name: 'b',
      hooks: [{ id: 'block', point: 'pre_tool_use', capability: 'guardrail', command: `echo "no rm" >&2; exit 2` }],
    }),
  );
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(entry: string, config: string, db = 'b.db', nodeArgs: string[] = []) {
  return spawnSync(process.execPath, [...nodeArgs, entry, 'claude', '--config', config, '--db', join(dir, db)], {
    input,
    encoding: 'utf8',
  });
}

function expectDeny(result: ReturnType<typeof run>, by: string): void {
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  const answer = JSON.parse(result.stdout);
  expect(answer.hookSpecificOutput).toMatchObject({ hookEventName: 'PreToolUse', permissionDecision: 'deny' });
  expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(new RegExp(`denied by ${by}\\b`));
}

describe('the single-file claude bundle', { timeout: 60_000 }, () => {
  it('answers like `hookledger claude`, and writes then reuses its V8 code cache', async () => {
    rmSync(cacheFile, { force: true });
    const first = run(launcher, hooks);
    expectDeny(first, 'block');
    expect(existsSync(cacheFile)).toBe(true);
    const second = run(launcher, hooks);
    expectDeny(second, 'block');
    const answer = JSON.parse(second.stdout);
    expect(answer.hookSpecificOutput.permissionDecisionReason).toMatch(/denied by block .*no rm/);

    const cli = await runCli(['claude', '--config', hooks, '--db', join(dir, 'c.db')], { input: input.toString() });
    const viaCli = JSON.parse(cli.stdout);
    // Same answer but for the invocation id named in the reason.
    const strip = (a: { hookSpecificOutput: { permissionDecisionReason: string } }) =>
      a.hookSpecificOutput.permissionDecisionReason.replace(/explain \d+/, 'explain N');
    expect(strip(answer)).toBe(strip(viaCli));
  });

  it('decides the same with a corrupt or truncated code cache, and writes a good one in its place', () => {
    run(launcher, hooks); // a cache exists
    const good = readFileSync(cacheFile);
    for (const bad of [Buffer.from('not a V8 code cache at all'), good.subarray(0, Math.floor(good.length / 2)), Buffer.alloc(0)]) {
      writeFileSync(cacheFile, bad);
      expectDeny(run(launcher, hooks), 'block');
      // V8 rejected it; the launcher wrote a fresh one on exit, which the next run accepts.
      expect(readFileSync(cacheFile).length).toBeGreaterThan(1000);
      expectDeny(run(launcher, hooks), 'block');
    }
  });

  it("holds only the part of zod it uses: no other locale, no JSON Schema import (import * as z from 'zod')", () => {
    const code = readFileSync(launcher.replace(/\.cjs$/, '-bundle.cjs'), 'utf8');
    expect(code).not.toContain('Ungültige Eingabe'); // zod's German locale
    expect(code).not.toContain('fromJSONSchema');
  });

  it('still answers through claude.mjs, the launcher that earlier installs wrote into settings', () => {
    expectDeny(run(launcher.replace(/\.cjs$/, '.mjs'), hooks), 'block');
  });

  it('loads ES-module, CommonJS and top-level-await configs', () => {
    const hook = `{ id: 'no-rm', point: 'pre_tool_use', capability: 'guardrail', run: (inv) => String(inv.toolInput?.command).includes('rm -rf') ? { decision: 'deny', message: 'no' } : undefined }`;
    const configs = {
      'esm.mjs': `export default { name: 'esm', hooks: [${hook}] };`,
      'cjs.cjs': `module.exports = { name: 'cjs', hooks: [${hook}] };`,
      'named.mjs': `export const hooks = { name: 'named', hooks: [${hook}] };`,
      'tla.mjs': `const name = await Promise.resolve('tla');\nexport default { name, hooks: [${hook}] };`,
    };
    for (const [file, source] of Object.entries(configs)) {
      writeFileSync(join(dir, file), source);
      expectDeny(run(launcher, join(dir, file)), 'no-rm');
    }
    const missing = run(launcher, join(dir, 'missing.mjs'));
    expect(missing.status).toBe(0);
    expect(JSON.parse(missing.stdout).hookSpecificOutput.permissionDecisionReason).toMatch(
      /could not decide: .*missing\.mjs: config file not found/,
    );
  });

  it("compiles no code from strings on the way to an answer: zod's JIT is off before any schema is built", () => {
    const preload = join(dir, 'count-compiles.cjs');
    writeFileSync(
      preload,
      `let compiled = 0;
globalThis.Function = new Proxy(Function, {
  construct: (target, args) => ((compiled += 1), Reflect.construct(target, args)),
  apply: (target, self, args) => ((compiled += 1), Reflect.apply(target, self, args)),
});
process.on('exit', () => require('node:fs').writeSync(2, 'compiled from strings: ' + compiled + '\\n'));`,
    );
    const config = join(dir, 'validated.mjs');
    writeFileSync(
      config,
      `export default { name: 'v', hooks: [{ id: 'no', point: 'pre_tool_use', capability: 'guardrail', run: () => ({ decision: 'deny', message: 'no' }) }] };`,
    );
    const result = run(launcher, config, 'b.db', ['--require', preload]);
    // zod reads jitless when a schema is built: set later, the schemas built at load compiled their parsers (6 here).
    expect(result.stderr).toBe('compiled from strings: 0\n');
    expect(JSON.parse(result.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
  });

  it('loads no stdio sockets, worker threads or promise-based fs on the way to an answer', () => {
    const list = join(dir, 'modules.txt');
    const preload = join(dir, 'list-modules.cjs');
    writeFileSync(
      preload,
      `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join('\\n')));`,
    );
    // In-process hooks: a command hook's own pipes would need net.
    const config = join(dir, 'in-process.mjs');
    writeFileSync(
      config,
      `export default { name: 'p', hooks: [{ id: 'no', point: 'pre_tool_use', capability: 'guardrail', run: () => ({ decision: 'deny', message: 'no' }) }] };`,
    );
    expectDeny(run(launcher, config, 'b.db', ['--require', preload]), 'no');
    const loaded = readFileSync(list, 'utf8').split('\n');
    // stdin, stdout and stderr are pipes here, as under Claude Code: process.stdin & co. would load net.
    for (const builtin of ['net', 'worker_threads', 'internal/fs/promises', 'tty'])
      expect(loaded, builtin).not.toContain(`NativeModule ${builtin}`);
  });
});
