import { afterEach, describe, expect, it } from 'vitest';
import { defineHooks } from '../../src/domain/hooks.js';
import type { Invocation } from '../../src/domain/invocation.js';
import { PostgresStore } from '../../src/ledger/postgres/store.js';
import { DEFAULT_LEASE_MS, defaultLeaseMs } from '../../src/ledger/postgres/writer-lease.js';
import { parseInvocation } from '../../src/runner/runner.js';
import { sleep } from '../helpers.js';
import { adminSql, freshDatabase } from './support.js';

const stores: PostgresStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
});

const hookSet = defineHooks({ name: 'lease', version: '1', hooks: [{ id: 'guard', point: 'pre_tool_use', run: () => undefined }] });
const input = parseInvocation({ point: 'pre_tool_use', sessionId: 's', toolName: 'Bash', toolInput: { command: 'ls' } }) as Invocation;

describe('writer leases on PostgreSQL', () => {
  it('HOOKLEDGER_LEASE_MS sets the lease; a malformed or tiny value keeps the default', () => {
    expect(defaultLeaseMs(undefined, {})).toBe(DEFAULT_LEASE_MS);
    expect(defaultLeaseMs(undefined, { HOOKLEDGER_LEASE_MS: '2500' })).toBe(2500);
    expect(defaultLeaseMs(1234, { HOOKLEDGER_LEASE_MS: '2500' })).toBe(1234);
    for (const bad of ['', 'abc', '-5', '1.5', '99'])
      expect(defaultLeaseMs(undefined, { HOOKLEDGER_LEASE_MS: bad })).toBe(DEFAULT_LEASE_MS);
  });

  it('a live writer sweeps expired leases: a dead writer’s running rows are interrupted after its lease with no new open', async () => {
    const { url, name } = await freshDatabase();
    const dead = await PostgresStore.open({ url, writerId: 'dead', leaseMs: 1500 });
    const alive = await PostgresStore.open({ url, writerId: 'alive', leaseMs: 300 });
    stores.push(dead, alive);
    const deadRecorder = dead.writer();
    const running = await deadRecorder.begin(await deadRecorder.hookSetId(hookSet), input, Date.now());
    // The writer stops renewing (its process hung or its machine vanished); its last sign of life is now.
    dead.lease.stop();
    const lastRenewal = Date.now();
    // Registering starts the live writer's renewals, and with them its sweeps.
    const aliveRecorder = alive.writer();
    await aliveRecorder.begin(await aliveRecorder.hookSetId(hookSet), input, Date.now());

    const status = async () =>
      (await adminSql<{ status: string }>('SELECT status FROM invocations WHERE id = $1', name, [running]))[0]!.status;
    await sleep(600);
    if (Date.now() < lastRenewal + 1400) expect(await status()).toBe('running');
    const deadline = Date.now() + 20_000;
    while ((await status()) === 'running' && Date.now() < deadline) await sleep(100);
    expect(await status()).toBe('interrupted');
    const [{ lease_until }] = (await adminSql<{ lease_until: number }>(
      `SELECT lease_until::float8 FROM writers WHERE id = 'dead'`,
      name,
    )) as [{ lease_until: number }];
    expect(Date.now()).toBeGreaterThanOrEqual(lease_until);
    expect(await adminSql('SELECT message FROM invocations WHERE id = $1', name, [running])).toEqual([
      { message: 'writer dead stopped renewing its lease before the decision was committed' },
    ]);
    // The live writer's own running row is untouched.
    expect(await adminSql(`SELECT status FROM invocations WHERE writer_id = 'alive'`, name)).toEqual([{ status: 'running' }]);
  }, 60_000);
});
