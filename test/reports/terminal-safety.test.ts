import { describe, expect, it } from 'vitest';
import { escapeControls } from '../../src/reports/controls.js';
import { painter } from '../../src/reports/paint.js';
import { table } from '../../src/reports/format.js';
import { defineHooks } from '../../src/domain/hooks.js';
import { deny } from '../../src/domain/results.js';
import { createRunner } from '../../src/runner/runner.js';
import { runCli } from '../cli-helpers.js';
import { tempLedger } from '../helpers.js';

const ESC = '\u001b';
// Cursor up + erase line, then conceal: what a hostile prompt uses to rewrite or hide a report line.
const HOSTILE = `key AKIA${ESC}[1A${ESC}[2K${ESC}[8mhidden\nFORGED LINE\u202eevil`;
const UUID = 'a3f1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b';
const LONG_TOOL = 'mcp__github__create_pull_request_review_x'.slice(0, 40);
const LONG_HOOK = 'a-very-long-hook-identifier-for-the-production-github-guard-x'.slice(0, 60);
const tooWide = (text: string) => text.split('\n').filter((l) => [...l].length > 80);

/** A real ledger, through the runner: a denied hostile prompt, a long MCP tool, a long hook id, a UUID session. */
async function hostileLedger(): Promise<{ path: string; deniedId: number }> {
  const { ledger, path } = tempLedger();
  const hookSet = defineHooks({
    name: 'safety',
    version: '1',
    hooks: [
      {
        id: 'prompt-guard',
        point: 'user_prompt_submit',
        capability: 'guardrail',
        run: (inv) => (String(inv.prompt).includes('key') ? deny(`blocked prompt: ${String(inv.prompt)}`, 'policy_violation') : undefined),
      },
      {
        id: LONG_HOOK,
        point: 'pre_tool_use',
        capability: 'guardrail',
        run: (inv) => (inv.toolName === LONG_TOOL ? deny('=HYPERLINK("http://evil.example")', 'policy_violation') : undefined),
      },
    ],
  });
  const runner = createRunner({ hookSet, ledger });
  const denied = await runner.run({ point: 'user_prompt_submit', sessionId: UUID, prompt: HOSTILE });
  for (let i = 0; i < 3; i++) {
    await runner.run({
      point: 'pre_tool_use',
      sessionId: UUID,
      toolName: LONG_TOOL,
      toolUseId: `-tu-${i}`,
      toolInput: { body: 'x'.repeat(120) },
    });
  }
  await runner.close();
  ledger.close();
  return { path, deniedId: denied.invocationId };
}

describe('reports on a terminal', { timeout: 90_000 }, () => {
  it('control characters from agents and hooks are shown, not obeyed, and stay on their line', async () => {
    const { path, deniedId } = await hostileLedger();
    for (const args of [['explain', String(deniedId)], ['sessions', UUID], ['denials']]) {
      const result = await runCli([...args, '--db', path]);
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).not.toContain(ESC);
      expect(result.stdout).not.toContain('\u202e');
      expect(result.stdout).toContain('key AKIA\\x1b[1A');
      // The injected newline is folded: no line of the report starts with the forged text.
      expect(result.stdout.split('\n').some((l) => l.trimStart().startsWith('FORGED'))).toBe(false);
      if (args[0] === 'explain') expect(result.stdout).toContain('AKIA\\x1b[1A\\x1b[2K\\x1b[8mhidden FORGED LINE\\u202eevil');
    }
  });

  it('keeps exactly our own colours', () => {
    const paint = painter(true);
    const text = `${paint('red', 'deny')} ${ESC}[8mconcealed ${ESC}[31mdata-red ${ESC}]8;;http://x${ESC}\\ \u0007 \u009b \u2028`;
    const shown = escapeControls(text, true);
    expect(shown.startsWith(`${ESC}[31mdeny${ESC}[39m `)).toBe(true);
    expect(shown).toContain('\\x1b[8mconcealed');
    expect(shown).toContain('\\x1b]8;;http://x\\x1b\\');
    expect(shown).toContain('\\x07 \\x9b \\u2028');
    // With colour off nothing passes, not even a sequence shaped like ours.
    expect(escapeControls(text, false)).not.toContain(ESC);
  });

  it('the sessions list shows a whole UUID; wide tables shrink their widest columns to fit 80', async () => {
    const { path } = await hostileLedger();
    const list = await runCli(['sessions', '--db', path]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(UUID);
    expect(tooWide(list.stdout)).toEqual([]);

    for (const args of [['sessions', UUID], ['hooks']]) {
      const result = await runCli([...args, '--db', path]);
      expect(result.code).toBe(0);
      expect(tooWide(result.stdout), args.join(' ')).toEqual([]);
      // Cut with an ellipsis, not dropped.
      expect(result.stdout).toContain(args[0] === 'hooks' ? LONG_HOOK.slice(0, 12) : LONG_TOOL.slice(0, 11));
      expect(result.stdout).toContain('…');
    }
  });

  it('table: cut painted cells still switch their colour off; kept columns are never cut', () => {
    const paint = painter(true);
    const out = table(['A', 'B'], [[paint('bold', 'x'.repeat(60)), 'y'.repeat(60)]], 40);
    const line = out.split('\n')[1]!;
    expect(line).toBe(`${ESC}[1m${'x'.repeat(18)}…${ESC}[22m  ${'y'.repeat(18)}…`);
    expect(table(['A', 'ID'], [['x'.repeat(50), UUID]], 60, { keep: [1] })).toContain(UUID);
  });

  it('CSV export: text cells that a spreadsheet would run as a formula start with a quote', async () => {
    const { path } = await hostileLedger();
    const csv = await runCli(['export', '--db', path, '--format', 'csv']);
    expect(csv.code).toBe(0);
    const [header, ...rows] = parseCsv(csv.stdout);
    const col = (name: string) => header!.indexOf(name);
    const denied = rows.filter((r) => r[col('toolName')] === LONG_TOOL);
    expect(denied).toHaveLength(3);
    for (const row of denied) {
      expect(row[col('message')]).toBe(`'=HYPERLINK("http://evil.example")`);
      expect(row[col('toolUseId')]).toMatch(/^'-tu-\d$/);
      expect(Number.isFinite(Number(row[col('durationUs')]))).toBe(true);
    }
    // JSON Lines carries the data as it was.
    const jsonl = await runCli(['export', '--db', path]);
    expect(jsonl.stdout).toContain('"message":"=HYPERLINK(\\"http://evil.example\\")"');
  });
});

/** RFC 4180, enough for the export: quoted cells with "" and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(cell);
      cell = '';
    } else if (ch === '\r' && text[i + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      i++;
    } else cell += ch;
  }
  return rows;
}
