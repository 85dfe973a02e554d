import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { showReplayRun } from '../../src/ledger/queries/replay-runs.js';
import { replay } from '../../src/replay/replay.js';
import { tempLedger } from '../helpers.js';
import { bashCall, readCall, record, variant } from './fixtures.js';

let server: Server | null = null;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = null;
});

/** A real HTTP hook on 127.0.0.1: denies reads of .env files, and says whether it was told this is a replay. */
async function httpHook(): Promise<{ url: string; bodies: unknown[] }> {
  const bodies: unknown[] = [];
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(text) as { tool_input?: { file_path?: string }; hookledger?: { replay?: boolean } };
      bodies.push(body);
      const denied = String(body.tool_input?.file_path).includes('.env');
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify(
          denied
            ? {
                hookSpecificOutput: {
                  hookEventName: 'PreToolUse',
                  permissionDecision: 'deny',
                  permissionDecisionReason: `http says no (replay=${body.hookledger?.replay})`,
                },
              }
            : {},
        ),
      );
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/hook`, bodies };
}

describe('replay runs command and http hooks', () => {
  it('runs a command hook and an http hook of the new set, with the replay flag, each under its timeout', async () => {
    const { ledger } = tempLedger();
    await record(ledger, undefined, [bashCall('ls'), bashCall('rm x'), readCall('/app/.env.local'), readCall('/app/a.ts')]);
    const http = await httpHook();
    const hookSet = variant('cmd', [
      {
        id: 'no-rm-rf',
        point: 'pre_tool_use',
        match: 'Bash',
        capability: 'guardrail',
        priority: 10,
        command: `if grep -q '"rm '; then echo "no rm (replay=$HOOKLEDGER_REPLAY)" >&2; exit 2; fi`,
      },
      { id: 'no-env', point: 'pre_tool_use', match: 'Read', capability: 'guardrail', priority: 20, http: http.url },
      { id: 'slow-audit', point: 'pre_tool_use', match: 'Bash', timeoutMs: 200, command: 'sleep 5' },
    ]);
    const result = await replay({ ledger, hookSet });
    const shown = showReplayRun(ledger, result.runId);
    // Out-of-process hooks: replayed 4 at a time by default.
    expect(shown.run.options.concurrency).toBe(4);
    const byId = new Map(shown.changes.map((c) => [c.invocationId, c]));
    expect(byId.get(2)).toMatchObject({ change: 'newly_denied', newDecisiveHookId: 'no-rm-rf', new: { message: 'no rm (replay=1)' } });
    // v1 denied it too, with its own message.
    expect(byId.get(3)).toMatchObject({
      change: 'other_reason',
      newDecisiveHookId: 'no-env',
      new: { message: 'http says no (replay=true)' },
    });
    // ls: the new observer times out and fails open, so the decision holds, but it is reported.
    expect(byId.get(1)).toMatchObject({ change: 'failed', oldDecision: 'none', newDecision: 'none' });
    expect(byId.get(1)?.hookChanges).toContainEqual(
      expect.objectContaining({ hookId: 'slow-audit', kind: 'new', new: expect.objectContaining({ status: 'timed_out' }) }),
    );
    expect(byId.has(4)).toBe(false);
    expect(http.bodies).toHaveLength(2);
  });
});
