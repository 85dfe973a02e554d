import { describe, expect, it } from 'vitest';
import { listDenials } from '../../src/ledger/queries/denials.js';
import { listSessions, sessionTimeline } from '../../src/ledger/queries/sessions.js';
import { bash, setup } from '../helpers.js';

describe('a filter that selects nothing', () => {
  it('pages sessions and denials as empty (the listings bind their own parameters too)', async () => {
    const { runner, ledger } = setup([{ id: 'watch', point: 'pre_tool_use', run: () => undefined }]);
    await runner.run({ ...bash('ls'), sessionId: 's-1' });
    const past = { since: 1_000, until: 2_000 };
    expect(listSessions(ledger, past, { limit: 10 })).toEqual({ rows: [], nextCursor: null });
    expect(listSessions(ledger, { hookSet: 'no-such-set' }, { limit: 10 })).toEqual({ rows: [], nextCursor: null });
    expect(listDenials(ledger, past, { limit: 10 })).toEqual({ rows: [], nextCursor: null });
    expect(() => sessionTimeline(ledger, 's-1', { limit: 10 }, past)).toThrow(/no invocations for session/);
    expect(listSessions(ledger, {}, { limit: 10 }).rows.map((r) => r.sessionId)).toEqual(['s-1']);
  });
});
