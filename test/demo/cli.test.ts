import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';

describe("hookledger demo (the README's first command, end to end)", () => {
  it('records the bundled session, prints the summary and every denial, warns about nothing, and explain reads it back', async () => {
    const dir = tempDir();
    const demo = await runCli(['demo'], { cwd: dir, timeoutMs: 60_000 });
    expect(demo.stderr).toBe('');
    expect(demo.code).toBe(0);
    expect(demo.stdout).toMatch(/decisions\s+10 deny, 1 ask, 0 allow, 73 none/);
    expect(demo.stdout).toMatch(/modified\s+1 input\(s\) rewritten by a guardrail/);
    expect(demo.stdout).toMatch(/3 timed out \(license-check: fail-open, github-org-policy: fail-closed\)/);
    expect(demo.stdout).toContain('Denials (10)');
    const db = join(dir, 'hookledger-demo.db');
    expect(existsSync(db)).toBe(true);

    const denied = /#(\d+) Bash\s+DENY by block-destructive-rm/.exec(demo.stdout);
    expect(denied).not.toBeNull();
    const explained = await runCli(['explain', denied![1]!, '--db', db, '--json']);
    expect(explained.code).toBe(0);
    expect(JSON.parse(explained.stdout)).toMatchObject({
      invocation: { decision: 'deny' },
      decisive: { hookId: 'block-destructive-rm', reasonCode: 'safety_violation' },
    });

    const verify = await runCli(['verify', '--db', db]);
    expect(verify.code).toBe(0);
  }, 120_000);
});
