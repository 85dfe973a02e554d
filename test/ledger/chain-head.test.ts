import { describe, expect, it } from 'vitest';
import { chainHead } from '../../src/ledger/queries/chain-head.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { bash, setup, tempLedger } from '../helpers.js';

describe('chainHead', () => {
  it('is null on an empty ledger and the link verify ends at once invocations are recorded', async () => {
    expect(chainHead(tempLedger().ledger)).toBeNull();
    const { runner, ledger } = setup([{ id: 'watch', point: 'pre_tool_use', run: () => undefined }]);
    await runner.run(bash('ls'));
    await runner.run(bash('pwd'));
    const head = chainHead(ledger)!;
    expect(head).toMatchObject({ seq: verifyLedger(ledger).head.seq, hash: verifyLedger(ledger).head.hash, kind: 'invocation' });
    expect(head.at).toBeGreaterThan(0);
  });
});
