import { existsSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildHookBundle } from '../../scripts/build-bundle.js';
import { runCli, runNode } from '../cli-helpers.js';
import { tempDir } from '../helpers.js';
import { freshDatabase } from '../postgres/support.js';
import { verifyCentre, writeLedger } from './support.js';

const root = join(import.meta.dirname, '../..');

describe('the single-file ship bundle (dist/bundle/ship.cjs)', { timeout: 120_000 }, () => {
  it('ships like `hookledger ship` (exactly once, both ends verify), writes its code cache, and reports bad usage in one line', async () => {
    const dir = tempDir();
    const launcher = await buildHookBundle('ship', join(dir, 'dist', 'bundle', 'ship.cjs'));
    for (const name of ['migrations', 'node_modules', 'package.json']) symlinkSync(join(root, name), join(dir, name));
    const db = join(dir, 'laptop.db');
    await writeLedger(db, 60, 'b');
    const { url } = await freshDatabase();
    const env = { HOOKLEDGER_SHIP_TO: url };

    const first = await runNode([launcher, '--db', db, '--json'], { env });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(first.stdout).shipped).toMatchObject({ invocations: 60, hookSets: 1 });
    expect(existsSync(`${launcher.replace(/\.cjs$/, '-bundle.cjs')}.cache`)).toBe(true);
    // `ship` first, as bin.ts hands it over; the modules' CLI agrees that nothing is left.
    const again = await runNode([launcher, 'ship', '--db', db, '--json'], { env });
    expect(JSON.parse(again.stdout).shipped).toMatchObject({ invocations: 0, links: 0 });
    const fromModules = await runCli(['ship', '--db', db, '--json'], { env });
    expect(JSON.parse(fromModules.stdout)).toMatchObject({ source: JSON.parse(first.stdout).source, shipped: { links: 0 } });
    expect((await verifyCentre(url)).ok).toBe(true);

    const bogus = await runNode([launcher, '--db', db, '--bogus'], { env });
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/^hookledger: ship: Unknown option '--bogus'[^\n]*\n$/);
    const help = await runNode([launcher, '--help']);
    expect(help).toMatchObject({ code: 0, stdout: expect.stringMatching(/^usage: hookledger ship --to/) });
  });

  it('is what `hookledger ship` runs from the built package, unless HOOKLEDGER_SHIP_BUNDLE=0', async () => {
    const bundleCache = join(root, 'dist', 'bundle', 'ship-bundle.cjs.cache');
    expect(existsSync(join(root, 'dist', 'bundle', 'ship.cjs')), 'build first: npm run build').toBe(true);
    const db = join(tempDir(), 'id.db');
    const bin = join(root, 'bin', 'hookledger.js');
    rmSync(bundleCache, { force: true });
    const viaModules = await runNode([bin, 'ship', '--source-id', '--db', db], { env: { HOOKLEDGER_SHIP_BUNDLE: '0' } });
    expect(viaModules.code).toBe(0);
    expect(existsSync(bundleCache)).toBe(false);
    const viaBundle = await runNode([bin, 'ship', '--source-id', '--db', db]);
    expect(viaBundle).toMatchObject({ code: 0, stdout: viaModules.stdout });
    expect(viaModules.stdout).toMatch(/^src-[0-9a-f-]{36}\n$/);
    // Written by the bundle's launcher, never by the modules' path.
    expect(existsSync(bundleCache)).toBe(true);
  });
});
