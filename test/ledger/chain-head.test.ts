import { describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { bash, setup, tempLedger } from '../helpers.js';

describe('chainHeads (SQLite)', () => {
  it('is empty on an empty ledger, then the one chain ending at the link verify ends at', async () => {
    expect(await tempLedger().ledger.chainHeads()).toEqual([]);
    const { runner, ledger } = setup([{ id: 'watch', point: 'pre_tool_use', run: () => undefined }]);
    await runner.run(bash('ls'));
    await runner.run(bash('pwd'));
    const heads = await ledger.chainHeads();
    expect(heads).toHaveLength(1);
    const { head } = verifyLedger(ledger);
    expect(heads[0]).toMatchObject({ writer: null, seq: head.seq, hash: head.hash, kind: 'invocation' });
    expect(heads[0]!.at).toBeGreaterThan(0);
  });
});
