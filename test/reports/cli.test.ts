import { describe, expect, it } from 'vitest';
import { painter } from '../../src/reports/paint.js';
import { listDenials } from '../../src/ledger/queries/denials.js';
import { renderDenials } from '../../src/reports/denials-text.js';
import { runCli } from '../cli-helpers.js';
import { buildLedger } from './fixture.js';

const fits80 = (text: string) => text.split('\n').filter((l) => [...l].length > 80);

// Each test spawns the real CLI several times; allow for a loaded machine.
describe('report commands', { timeout: 90_000 }, () => {
  it('denials: readable text within 80 columns, stable JSON, cursor paging, groups', async () => {
    const { path, recorded, ledger } = await buildLedger();
    const denials = recorded.filter((r) => r.report.decision === 'deny');
    const newest = denials[denials.length - 1]!.report;

    const text = await runCli(['denials', '--db', path, '--limit', '5']);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^ID\s+WHEN \(UTC\)\s+SESSION\s+AGENT\s+TOOL\s+HOOK\n/);
    expect(text.stdout).toContain(`${newest.invocationId}  `);
    expect(text.stdout).toContain(`${newest.reasonCode}: ${newest.message}`);
    expect(text.stdout).toMatch(/more: --cursor \S+ +\(details: hookledger explain ID\)/);
    expect(fits80(text.stdout)).toEqual([]);
    expect(text.stdout).not.toContain('\u001b[');

    const json = JSON.parse((await runCli(['denials', '--db', path, '--tool', 'Bash', '--json'])).stdout);
    expect(Object.keys(json)).toEqual(['rows', 'nextCursor']);
    expect(json.rows.map((r: { invocationId: number }) => r.invocationId)).toEqual(
      listDenials(ledger, { toolName: 'Bash' }, { limit: 50 }).rows.map((r) => r.invocationId),
    );
    const next = JSON.parse((await runCli(['denials', '--db', path, '--limit', '3', '--json'])).stdout);
    const page2 = JSON.parse((await runCli(['denials', '--db', path, '--limit', '3', '--cursor', next.nextCursor, '--json'])).stdout);
    expect(page2.rows[0].invocationId).toBeLessThan(next.rows[2].invocationId);

    const grouped = await runCli(['denials', '--db', path, '--group-by', 'reason']);
    expect(grouped.stdout).toMatch(/^REASON\s+COUNT\s+SHARE\n/);
    expect(grouped.stdout).toContain(`${denials.length} denials`);
    expect(fits80(grouped.stdout)).toEqual([]);
    const groupedJson = JSON.parse((await runCli(['denials', '--db', path, '--group-by', 'session', '--json'])).stdout);
    expect(groupedJson).toMatchObject({ groupBy: 'session', total: denials.length, totalGroups: 4 });
  });

  it('sessions: the list and a timeline within 80 columns', async () => {
    const { path } = await buildLedger();

    const sessions = await runCli(['sessions', '--db', path]);
    expect(sessions.stdout).toMatch(/^LAST SEEN \(UTC\)\s+EVENTS\s+DENY\s+FAIL\s+T\/O\s+SESSION\n/);
    expect(fits80(sessions.stdout)).toEqual([]);
    const timeline = await runCli(['sessions', 's-1', '--db', path]);
    expect(timeline.code).toBe(0);
    expect(timeline.stdout).toMatch(/^Session s-1\n/);
    expect(timeline.stdout).toMatch(/pre Bash\s+none\*\s+rewrite\s+→ \{"command":"ls -a"\}/);
    expect(timeline.stdout).toMatch(/pre Bash\s+deny\s+no-rm\s+\{"command":"rm -rf \/"\}\n\s+safety_violation: rm -rf is not allowed\n/);
    expect(fits80(timeline.stdout)).toEqual([]);
    const timelineJson = JSON.parse((await runCli(['sessions', 's-1', '--db', path, '--json'])).stdout);
    expect(Object.keys(timelineJson)).toEqual(['session', 'events', 'nextCursor']);
  });

  it('hooks and export', async () => {
    const { path, recorded } = await buildLedger();
    const denials = recorded.filter((r) => r.report.decision === 'deny');

    const hooks = await runCli(['hooks', '--db', path, '--since', '1d']);
    expect(hooks.code).toBe(0);
    expect(hooks.stdout).toMatch(/HOOK\s+RUNS\s+ALLOW\s+DENY\s+ASK\s+MODIFY\s+DECIDED\s+SKIPPED/);
    expect(hooks.stdout).toMatch(/flaky .*failing \d+\.\d%/);
    expect(fits80(hooks.stdout)).toEqual([]);
    const hooksJson = JSON.parse((await runCli(['hooks', '--db', path, '--json'])).stdout);
    expect(Object.keys(hooksJson)).toEqual(['since', 'until', 'hooks']);

    const exported = await runCli(['export', '--db', path]);
    expect(exported.stdout.trimEnd().split('\n')).toHaveLength(recorded.length);
    const csv = await runCli(['export', '--db', path, '--format', 'csv', '--decision', 'deny']);
    expect(csv.stdout.trimEnd().split('\r\n')).toHaveLength(denials.length + 1);
  });

  it.each([
    [['denials', '--reason-code', 'polcy'], /^hookledger: --reason-code: unknown reason code "polcy" \(expected one of policy_violation, /],
    [
      ['denials', '--since', 'yesterday'],
      /^hookledger: --since: "yesterday" is not a date \(use an ISO date like 2026-11-01 or 2026-11-01T09:00 \(UTC unless a zone is given\), or an age like 7d, 12h, 30m, 1y\)/,
    ],
    [['denials', '--since', '2026-13-45'], /^hookledger: --since: "2026-13-45" is not a date/],
    [['denials', '--since', '1d', '--until', '2d'], /^hookledger: --since: 1d is not before --until 2d: the range is empty/],
    [['denials', '--point', 'pre_tool'], /^hookledger: --point: unknown point "pre_tool"/],
    [
      ['denials', '--group-by', 'colour'],
      /^hookledger: --group-by: "colour" is not a grouping \(expected one of hook, tool, reason, session, agent, day\)/,
    ],
    [['denials', '--limit', '0'], /^hookledger: --limit: expected a whole number >= 1, got "0"/],
    [['denials', '--cursor', 'abc'], /^hookledger: cursor: "abc" is not a cursor from a previous page/],
    [['denials', '--decision', 'allow'], /^hookledger: denials: Unknown option '--decision'/],
    [['export', '--format', 'xml'], /^hookledger: --format: "xml" is not an export format \(expected jsonl, csv or otlp\)/],
    [['export', '--decision', 'maybe'], /^hookledger: --decision: unknown decision "maybe"/],
    [['hooks', '--until', 'soon'], /^hookledger: --until: "soon" is not a date/],
    [['hooks', '--until', '99999999999999999'], /^hookledger: --until: "99999999999999999" is out of range/],
    [['denials', '--since', '2026-02-30'], /^hookledger: --since: "2026-02-30" is not a date: no such day or time/],
    [['export', '--until', '2026-11-01T24:00'], /^hookledger: --until: "2026-11-01T24:00" is not a date: no such day or time/],
    [
      ['sessions', '--session', 's-1'],
      /^hookledger: sessions: --session does not apply here; for one session use hookledger sessions SESSION_ID/,
    ],
    [['sessions', 's-1', '--session', 's-2'], /^hookledger: sessions: --session does not apply here/],
    [['sessions', 'no-such-session'], /^hookledger: no invocations for session "no-such-session"/],
  ])('%j gives one clear line', async (args, message) => {
    const { path } = await buildLedger();
    const result = await runCli([...(args as string[]), '--db', path]);
    expect(result.stderr).toMatch(message as RegExp);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.code).toBe((args as string[])[1] === 'no-such-session' ? 4 : 2);
  });

  it('colour only when asked for (a TTY without NO_COLOR)', async () => {
    const { ledger } = await buildLedger();
    const page = listDenials(ledger, {}, { limit: 3 });
    expect(renderDenials(page, painter(true))).toContain('\u001b[31m');
    expect(renderDenials(page, painter(false))).not.toContain('\u001b[');
  });
});
