import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The project's own eslint.config.js, run on source text placed (virtually) in each folder.
const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function boundaryErrors(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('import boundaries (eslint.config.js)', () => {
  it.each([
    ['src/domain/x.ts', "import { LedgerError } from '../ledger/open.js';"],
    ['src/runtimes/x.ts', "import { createRunner } from '../runner/runner.js';"],
    ['src/runner/x.ts', "import { LedgerWriter } from '../ledger/write.js';"],
    ['src/ledger/queries/x.ts', "import { table } from '../../reports/format.js';"],
    ['src/reports/x.ts', "import type { CliIo } from '../cli/io.js';"],
    ['src/replay/x.ts', "import { table } from '../reports/format.js';"],
    ['src/adapters/x.ts', "import { writeReport } from '../cli/io.js';"],
    ['src/reports/x.ts', "import { serveConsole } from '../console/server.js';"],
    ['src/adapters/x.ts', "import { startTelemetry } from '../telemetry/index.js';"],
    ['src/console/x.ts', "import { writeReport } from '../cli/io.js';"],
    ['src/telemetry/x.ts', "import { serveConsole } from '../console/server.js';"],
    ['src/index.ts', "export { main } from './cli/main.js';"],
    ['src/ship/x.ts', "import { writeReport } from '../cli/io.js';"],
    ['src/ledger/x.ts', "import { ship } from '../ship/ship.js';"],
  ])('%s may not: %s', async (file, source) => {
    const errors = await boundaryErrors(file, `${source}\nexport const x = 1;\n`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/may import only|does not expose the CLI/);
  });

  it.each([
    ['src/reports/x.ts', "import type { DenialPage } from '../ledger/queries/denials.js';"],
    ['src/replay/x.ts', "import { createRunner } from '../runner/runner.js';"],
    ['src/ledger/x.ts', "import type { InvocationRecorder } from '../runner/recorder.js';"],
    ['src/console/x.ts', "import { table } from '../reports/format.js';"],
    ['src/cli/commands/x.ts', "import { serveConsole } from '../../console/server.js';"],
    ['src/ledger/queries/x.ts', "import { prepared } from '../statements.js';"],
    ['src/ship/x.ts', "import { readBatch } from '../ledger/ship-source.js';"],
    ['src/cli/commands/x.ts', "import { ship } from '../../ship/ship.js';"],
  ])('%s may: %s', async (file, source) => {
    expect(await boundaryErrors(file, `${source}\nexport const x = 1;\n`)).toEqual([]);
  });
});
