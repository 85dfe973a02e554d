import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteLedger } from '../../src/ledger/sqlite-ledger.js';
import { startCli } from '../cli-helpers.js';
import { sleep, tempDir } from '../helpers.js';
import { adminSql, freshDatabase } from '../postgres/support.js';
import { startWriter, verifyCentre, writeLedger } from './support.js';

describe('ship --follow', { timeout: 300_000 }, () => {
  it('ships records as they commit while a writer records, and stops cleanly on SIGTERM with the counts', async () => {
    const dir = tempDir();
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 5, 'warm');
    const { url, name } = await freshDatabase();
    const run = startCli(['ship', '--follow', '--db', db, '--json'], { env: { HOOKLEDGER_SHIP_TO: url } });
    // 0 until ship has connected and created the schema.
    const centralLinks = async () =>
      (await adminSql<{ n: number }>(`SELECT count(*)::int AS n FROM chain`, name).catch(() => [{ n: 0 }]))[0]!.n;
    const localLinks = () => {
      const ledger = SqliteLedger.open({ path: db });
      try {
        return ledger.sqlite.prepare('SELECT count(*) FROM chain').pluck().get() as number;
      } finally {
        ledger.close();
      }
    };
    // The follower is running once it has shipped what was there; then a writer records meanwhile.
    const warm = localLinks();
    for (const deadline = Date.now() + 60_000; (await centralLinks()) < warm && Date.now() < deadline;) await sleep(50);
    const writer = startWriter(db, 600, 'live');
    let seenMidway = false;
    let writing = true;
    void writer.done.finally(() => (writing = false));
    while (writing) {
      const n = await centralLinks();
      if (n > 10 && n < localLinks()) seenMidway = true;
      await sleep(100);
    }
    await writer.done;
    const target = localLinks();
    const deadline = Date.now() + 60_000;
    while ((await centralLinks()) < target && Date.now() < deadline) await sleep(50);
    expect(await centralLinks()).toBe(target);
    expect(seenMidway).toBe(true);

    run.child.kill('SIGTERM');
    const { code } = await run.exited;
    expect(code, run.output.stderr).toBe(0);
    const report = JSON.parse(run.output.stdout);
    expect(report.shipped.invocations).toBe(605);
    expect(report.head.seq).toBe(target);
    expect((await verifyCentre(url)).problems).toEqual([]);
  });
});
