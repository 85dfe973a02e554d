import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli-helpers.js';

const root = join(import.meta.dirname, '../..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };

describe('hookledger --version', () => {
  it('prints the version in package.json, from source and from the build', async () => {
    const fromSource = await runCli(['--version']);
    expect(fromSource).toEqual({ code: 0, stdout: `hookledger ${version}\n`, stderr: '' });
    // npm test builds first; the installed binary runs dist/.
    const built = await promisify(execFile)(process.execPath, [join(root, 'bin/hookledger.js'), '-v']);
    expect(built.stdout).toBe(`hookledger ${version}\n`);
  });
});
