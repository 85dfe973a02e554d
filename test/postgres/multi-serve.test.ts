import { Agent, request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../cli-helpers.js';
import { startServe, stopServe, type ServeProcess } from './serve-process.js';
import { concurrentDir, sleep } from '../helpers.js';
import { adminSql, freshDatabase } from './support.js';

/**
 * Three `hookledger serve --db postgres://…` processes on one database, each with 8 concurrent
 * keep-alive clients over real HTTP on 127.0.0.1, as a load balancer would spread a team's agents;
 * one is SIGKILLed mid-load. Beside multi-writer.test.ts, which does the same with bare writer
 * processes (no HTTP, no runner).
 */

const TOKEN = 'multi-serve-token-0123456789abcdef';
const LEASE_MS = 3000;
const CLIENTS = 8;
const PER_CLIENT = 15;

const dir = concurrentDir();
const config = join(dir, 'hooks.mjs');
writeFileSync(
  config,
  `export default {
  name: 'multi-serve', version: '1',
  hooks: [
    { id: 'guard', point: 'pre_tool_use', capability: 'guardrail',
      run: (inv) => (inv.toolInput.command.startsWith('rm') ? { decision: 'deny', message: 'no rm' } : undefined) },
    // Slow enough that a kill mid-load finds decisions in flight.
    { id: 'slow', point: 'pre_tool_use', run: () => new Promise((resolve) => setTimeout(resolve, 20)) },
    { id: 'audit', point: 'pre_tool_use', mode: 'background', run: () => undefined },
  ],
};
`,
);

const started: ServeProcess[] = [];
afterEach(async () => {
  for (const serve of started.splice(0)) await stopServe(serve);
});

async function serve(db: string, writer: string): Promise<ServeProcess> {
  const process = await startServe(config, db, TOKEN, { HOOKLEDGER_WRITER_ID: writer, HOOKLEDGER_LEASE_MS: String(LEASE_MS) });
  started.push(process);
  return process;
}

interface Ack {
  toolUseId: string;
  invocationId: number;
  decision: string;
}

/** POSTs one invocation on a keep-alive agent; resolves the report, rejects when the connection fails. */
function post(
  agent: Agent,
  sockets: Set<unknown>,
  url: string,
  body: unknown,
): Promise<{ status: number; json: { invocationId: number; decision: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/invocations`,
      { method: 'POST', agent, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) });
          } catch (error) {
            reject(error);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('socket', (socket) => sockets.add(socket));
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** `CLIENTS` concurrent keep-alive clients, each sending up to `count` invocations; acks collected as answered. */
async function load(
  url: string,
  writer: string,
  count: number,
  acks: Ack[],
  stop: { now: boolean },
): Promise<{ failures: number; connections: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const sockets = new Set<unknown>();
  let failures = 0;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, client) => {
      for (let i = 0; i < count && !stop.now; i++) {
        const toolUseId = `${writer}-${client}-${i}`;
        const command = i % 4 === 0 ? `rm -rf build-${i}` : `ls ${i}`;
        try {
          const { status, json } = await post(agent, sockets, url, {
            point: 'pre_tool_use',
            sessionId: `s-${writer}-${client}`,
            toolName: 'Bash',
            toolUseId,
            toolInput: { command },
          });
          if (status === 200) acks.push({ toolUseId, invocationId: json.invocationId, decision: json.decision });
          else failures++;
        } catch {
          failures++;
          return; // the server is gone
        }
      }
    }),
  );
  agent.destroy();
  return { failures, connections: sockets.size };
}

describe('three serve processes on one PostgreSQL ledger', () => {
  it('3 serve × 8 keep-alive clients: every acknowledged decision once; SIGKILL one mid-load: its in-flight rows interrupted after its lease; every chain verifies', async () => {
    const { url: db, name } = await freshDatabase();
    const servers = await Promise.all(['serve-a', 'serve-b', 'serve-c'].map((writer) => serve(db, writer)));
    const [a, b, victim] = servers as [(typeof servers)[0], (typeof servers)[0], (typeof servers)[0]];
    const acks: Ack[] = [];
    const victimAcks: Ack[] = [];
    const stopVictim = { now: false };
    const running = [
      load(a.url, 'serve-a', PER_CLIENT, acks, { now: false }),
      load(b.url, 'serve-b', PER_CLIENT, acks, { now: false }),
      load(victim.url, 'serve-c', 1_000, victimAcks, stopVictim),
    ];
    // Kill the third server mid-load, once it has answered a good number of decisions.
    const deadline = Date.now() + 120_000;
    while (victimAcks.length < 40 && Date.now() < deadline) await sleep(20);
    expect(victimAcks.length).toBeGreaterThanOrEqual(40);
    victim.cli.child.kill('SIGKILL');
    stopVictim.now = true;
    const killedAt = Date.now();
    expect((await victim.cli.exited).signal).toBe('SIGKILL');
    // What serve-c had begun but not committed (8 clients in flight, each decision takes ≥ 20 ms).
    const inFlight = await adminSql<{ id: number }>(
      `SELECT id::int FROM invocations WHERE writer_id = 'serve-c' AND status = 'running'`,
      name,
    );
    expect(inFlight.length).toBeGreaterThan(0);

    const [ra, rb] = await Promise.all(running);
    expect(ra!.failures + rb!.failures).toBe(0);
    // Keep-alive: each client kept its connection for all its requests.
    expect(ra!.connections).toBeLessThanOrEqual(CLIENTS);
    expect(rb!.connections).toBeLessThanOrEqual(CLIENTS);
    expect(acks).toHaveLength(2 * CLIENTS * PER_CLIENT);
    // Before serve-c's lease runs out its rows stay running: another host cannot tell it is dead.
    if (Date.now() < killedAt + LEASE_MS - 500) {
      const early = await adminSql<{ n: number }>(
        `SELECT count(*)::int AS n FROM invocations WHERE writer_id = 'serve-c' AND status = 'interrupted'`,
        name,
      );
      expect(early).toEqual([{ n: 0 }]);
    }
    // The live servers sweep expired leases: nobody has to open the ledger for serve-c's rows to be interrupted.
    let statuses: { id: number; status: string }[];
    const sweepDeadline = killedAt + LEASE_MS * 4 + 10_000;
    do {
      await sleep(250);
      statuses = await adminSql(`SELECT id::int, status FROM invocations WHERE id = ANY($1::bigint[])`, name, [inFlight.map((r) => r.id)]);
    } while (statuses.some((r) => r.status === 'running') && Date.now() < sweepDeadline);
    expect(statuses.map((r) => r.status)).toEqual(inFlight.map(() => 'interrupted'));
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(LEASE_MS);

    // Every acknowledged decision is there exactly once, committed with the decision answered.
    const rows = await adminSql<{ tool_use_id: string; id: number; status: string; decision: string | null; writer_id: string }>(
      `SELECT tool_use_id, id::int, status, decision, writer_id FROM invocations`,
      name,
    );
    const byToolUse = new Map<string, typeof rows>();
    for (const row of rows) byToolUse.set(row.tool_use_id, [...(byToolUse.get(row.tool_use_id) ?? []), row]);
    for (const ack of [...acks, ...victimAcks]) {
      const found = byToolUse.get(ack.toolUseId) ?? [];
      expect(found, ack.toolUseId).toHaveLength(1);
      expect(found[0]).toMatchObject({ id: ack.invocationId, status: 'completed', decision: ack.decision });
    }
    expect(new Set(acks.map((x) => x.decision))).toEqual(new Set(['deny', 'none']));

    // verify through the CLI: every writer's chain intact.
    const verified = await runCli(['verify', '--db', db, '--json'], { timeoutMs: 120_000 });
    expect(verified.code, verified.stderr).toBe(0);
    const report = JSON.parse(verified.stdout) as { ok: boolean; writers: { writer: string; links: number }[] };
    expect(report.ok).toBe(true);
    expect(report.writers.map((w) => w.writer)).toEqual(['serve-a', 'serve-b', 'serve-c']);
  }, 300_000);
});
