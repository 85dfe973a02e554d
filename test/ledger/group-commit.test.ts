import { writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import { LedgerError } from '../../src/domain/errors.js';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createRunner } from '../../src/runner/runner.js';
import { tempDir, tempLedger, waitFor } from '../helpers.js';
import { startServe } from '../postgres/serve-process.js';

const hookSet = defineHooks({
  name: 'group-commit',
  hooks: [
    {
      id: 'no-rm',
      point: 'pre_tool_use',
      capability: 'guardrail',
      run: (inv) =>
        String((inv.toolInput as { command?: string } | null)?.command).includes('rm -rf')
          ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no rm -rf' }
          : { decision: 'allow' },
    },
    { id: 'watch', point: 'pre_tool_use', run: () => ({ additionalContext: 'seen' }) },
    { id: 'later', point: 'pre_tool_use', mode: 'background', run: () => undefined },
  ],
});
const invocation = (n: number) => ({
  point: 'pre_tool_use' as const,
  sessionId: `s${n % 3}`,
  toolName: 'Bash',
  toolUseId: `toolu_${n}`,
  toolInput: { command: n % 2 === 0 ? `rm -rf /tmp/${n}` : `ls ${n}` },
});

describe('group commit (ledger/group-commit.ts)', () => {
  it('concurrent invocations share transactions; every one is committed whole, chained, and verifies', async () => {
    const { ledger } = tempLedger();
    const writer = ledger.writer({ groupCommit: true });
    const runner = createRunner({ hookSet, ledger: { writer: () => writer } });
    const before = ledger.sqlite.prepare('SELECT count(*) FROM chain').pluck().get() as number;
    const reports = await Promise.all(Array.from({ length: 48 }, (_, n) => runner.run(invocation(n))));
    const commits = writer.commits;
    await runner.close();
    expect(reports.map((r) => r.decision)).toEqual(Array.from({ length: 48 }, (_, n) => (n % 2 === 0 ? 'deny' : 'allow')));
    // 48 `running` rows and 48 final commits, in far fewer transactions than 96.
    expect(commits).toBeLessThanOrEqual(8);
    const rows = ledger.sqlite.prepare(`SELECT id, status, decision FROM invocations ORDER BY id`).all() as {
      id: number;
      status: string;
      decision: string;
    }[];
    expect(rows).toHaveLength(48);
    expect(rows.every((r) => r.status === 'completed')).toBe(true);
    for (const r of reports) {
      const stored = ledger.sqlite.prepare('SELECT decision FROM invocations WHERE id = ?').pluck().get(r.invocationId);
      expect(stored).toBe(r.decision);
    }
    // A link per invocation, and one per background outcome completed later (the 24 allowed ones; after a deny it is skipped).
    await waitFor(() => ledger.sqlite.prepare(`SELECT count(*) FROM outcomes WHERE status = 'pending'`).pluck().get() === 0, 10_000);
    expect(ledger.sqlite.prepare('SELECT count(*) FROM chain').pluck().get()).toBe(before + 48 + 24);
    expect(verifyLedger(ledger).ok).toBe(true);
    await ledger.close();
  });

  it('a write that fails fails only its own invocation; the others in its transaction commit', async () => {
    const { ledger } = tempLedger();
    const writer = ledger.writer({ groupCommit: true });
    const setId = writer.hookSetId(hookSet);
    const ids = await Promise.all([0, 1, 2].map((n) => writer.begin(setId, { ...invocation(n), turn: null } as never, Date.now())));
    // The middle invocation's row disappears before its decision is committed.
    ledger.sqlite.prepare('DELETE FROM invocations WHERE id = ?').run(ids[1]);
    const result = {
      decision: 'allow' as const,
      decisiveHookId: null,
      reasonCode: null,
      message: null,
      modifiedInput: null,
      additionalContext: [],
      durationUs: 1,
    };
    const settled = await Promise.allSettled(ids.map((id) => writer.finish(id, result, [])));
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const reason = (settled[1] as PromiseRejectedResult).reason as LedgerError;
    expect(reason).toBeInstanceOf(LedgerError);
    expect(reason.message).toMatch(new RegExp(`invocation #${ids[1]} is not in`));
    const statuses = ledger.sqlite.prepare('SELECT status FROM invocations ORDER BY id').pluck().all();
    expect(statuses).toEqual(['completed', 'completed']);
    await ledger.close();
  });

  it('serve, SIGKILLed under 16 concurrent clients, loses no acknowledged decision', async () => {
    const dir = tempDir();
    const db = join(dir, 'ledger.db');
    const config = join(dir, 'hooks.mjs');
    writeFileSync(
      config,
      `export const hooks = { name: 'crash', hooks: [
        { id: 'no-rm', point: 'pre_tool_use', capability: 'guardrail',
          run: (inv) => String(inv.toolInput?.command).includes('rm -rf') ? { decision: 'deny', reasonCode: 'safety_violation', message: 'no' } : { decision: 'allow' } },
        { id: 'watch', point: 'pre_tool_use', run: () => undefined },
      ] };\n`,
    );
    const token = 'group-commit-token-0123456789';
    const acknowledged = new Map<string, string>();
    for (let round = 0; round < 2; round++) {
      const serve = await startServe(config, db, token);
      const { child } = serve.cli;
      const port = Number(new URL(serve.url).port);
      const agent = new Agent({ keepAlive: true, maxSockets: 16 });
      let stop = false;
      let sent = 0;
      const call = (n: number) =>
        new Promise<void>((resolve) => {
          const toolUseId = `toolu_${round}_${n}`;
          const body = JSON.stringify({
            session_id: `s${round}`,
            hook_event_name: 'PreToolUse',
            tool_name: 'Bash',
            tool_use_id: toolUseId,
            tool_input: { command: n % 2 === 0 ? `rm -rf /tmp/${n}` : `ls ${n}` },
            cwd: dir,
          });
          const req = request(
            {
              host: '127.0.0.1',
              port,
              path: '/claude',
              method: 'POST',
              agent,
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
            },
            (res) => {
              let text = '';
              res.on('data', (c: Buffer) => (text += c.toString()));
              res.on('end', () => {
                // Only a complete 200 answer is an acknowledged decision.
                const decision = /"permissionDecision":"(\w+)"/.exec(text)?.[1];
                if (res.statusCode === 200 && decision) acknowledged.set(toolUseId, decision);
                resolve();
              });
              res.on('error', () => resolve());
            },
          );
          req.on('error', () => resolve());
          req.end(body);
        });
      const clients = Array.from({ length: 16 }, async () => {
        while (!stop) await call(sent++);
      });
      const target = acknowledged.size + 150 + round * 61;
      // A link per invocation, and one per background outcome completed later (the 24 allowed ones; after a deny it is skipped).
      await waitFor(() => acknowledged.size >= target || child.exitCode !== null, 60_000);
      child.kill('SIGKILL');
      stop = true;
      await serve.cli.exited;
      await Promise.all(clients);
      agent.destroy();
      expect(child.signalCode, serve.cli.output.stderr).toBe('SIGKILL');
    }
    const ledger = SqliteLedger.open({ path: db });
    try {
      const stored = ledger.sqlite.prepare(`SELECT status, decision FROM invocations WHERE tool_use_id = ?`);
      const lost = [...acknowledged].filter(([toolUseId, decision]) => {
        const row = stored.get(toolUseId) as { status: string; decision: string } | undefined;
        return row?.status !== 'completed' || row.decision !== decision;
      });
      expect(acknowledged.size).toBeGreaterThan(300);
      expect(lost).toEqual([]);
      expect(ledger.sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(verifyLedger(ledger).ok).toBe(true);
    } finally {
      await ledger.close();
    }
  }, 180_000);
});
