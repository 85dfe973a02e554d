import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { importMeerkatConfig, meerkatConfigPaths, readMeerkatConfigText } from '../../adapters/meerkat-config.js';
import { ConfigError } from '../../domain/errors.js';
import { stringFlag, type Command } from '../command.js';
import { writeImportOutput } from '../import-output.js';

export const command: Command = {
  summary: "turn meerkat's [[hooks.entries]] (.rkat/config.toml) into a hookledger hook set",
  usage: `import-meerkat [FILE...] [--out hooks.json] [--force] [--name NAME] [--json]

  Reads meerkat config files in meerkat's layering order (default: ~/.rkat/config.toml, then
  .rkat/config.toml, whichever exist) and turns each [[hooks.entries]] entry into a hook: id,
  point, priority, mode, capability, timeout_ms (else [hooks] default_timeout_ms, else 5000)
  and enabled kept. command and http entries keep their runtime and speak meerkat's protocol
  (protocol: "meerkat"), so the scripts run unchanged. in_process entries cannot be imported
  and are listed; hookledger's own entries are skipped.
  --out   write the hook set here (else it is printed on stdout)`,
  options: {
    out: { type: 'string', short: 'o' },
    force: { type: 'boolean' },
    name: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args, io) {
    let paths = args.positionals.map((p) => resolve(p));
    if (paths.length === 0) {
      const { user, project } = meerkatConfigPaths(process.cwd(), io.env.HOME ?? homedir());
      paths = [user, project].filter((p) => existsSync(p));
      if (paths.length === 0) throw new ConfigError(`no meerkat config found (looked for ${user} and ${project}); name the file`);
    }
    const files = paths.map((path) => {
      const { text, existed } = readMeerkatConfigText(path);
      if (!existed) throw new ConfigError(`${path}: meerkat config file not found`);
      return { path, text };
    });
    const result = importMeerkatConfig(files, stringFlag(args, 'name'));

    return writeImportOutput(args, io, {
      ...result,
      unsupportedLines: result.unsupported.map((u) => `${u.id} (${u.type}, ${u.source}): ${u.why}`),
      source: paths.join(', '),
    });
  },
};
