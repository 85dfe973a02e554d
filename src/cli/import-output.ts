import { existsSync, writeFileSync } from 'node:fs';
import type { ImportResult } from '../adapters/claude-settings.js';
import { UsageError } from '../domain/errors.js';
import { boolFlag, stringFlag, type CommandArgs } from './command.js';
import { writeJson, type CliIo } from './io.js';

/** What an import-* command produced: the hook set, and what it could and could not carry over. */
export interface ImportOutput {
  definition: unknown;
  imported: unknown[];
  unsupported: unknown[];
  /** One line per unsupported handler or entry, for the text output. */
  unsupportedLines: string[];
  warnings: string[];
  /** Where the hooks came from, for the summary line. */
  source: string;
}

/**
 * Writes an import's result the way every import-* command does: the hook set to `--out`
 * (refusing to overwrite without `--force`) or stdout, then a summary with the unsupported
 * entries and warnings (stderr when stdout holds the hook set); `--json` prints all of it.
 */
export function writeImportOutput(args: CommandArgs, io: CliIo, result: ImportOutput): number {
  const out = stringFlag(args, 'out');
  if (out !== undefined) {
    if (existsSync(out) && !boolFlag(args, 'force')) throw new UsageError(`--out: ${out} exists; add --force to overwrite it`);
    writeFileSync(out, `${JSON.stringify(result.definition, null, 2)}\n`);
  }
  if (boolFlag(args, 'json')) {
    writeJson(io, {
      hookSet: result.definition,
      out: out ?? null,
      imported: result.imported,
      unsupported: result.unsupported,
      warnings: result.warnings,
    });
    return 0;
  }
  if (out === undefined) writeJson(io, result.definition);
  const log = out === undefined ? io.stderr : io.stdout;
  log.write(`imported ${result.imported.length} hook(s) from ${result.source}${out !== undefined ? ` into ${out}` : ''}\n`);
  for (const line of result.unsupportedLines) log.write(`unsupported: ${line}\n`);
  for (const w of result.warnings) log.write(`warning: ${w}\n`);
  return 0;
}

/** `--on-failure` of the import commands: deny (fail closed) or allow, or undefined when not given. */
export function onFailureFlag(args: CommandArgs): 'deny' | 'allow' | undefined {
  const onFailure = stringFlag(args, 'on-failure');
  if (onFailure !== undefined && onFailure !== 'deny' && onFailure !== 'allow')
    throw new UsageError(`--on-failure: "${onFailure}" is not deny or allow`);
  return onFailure;
}

/** Writes the result of the Claude-shaped importer (import-claude, import-codex, import-gemini). */
export function writeClaudeShapedImport(
  args: CommandArgs,
  io: CliIo,
  result: ImportResult,
  source: string,
  extraWarnings: string[] = [],
): number {
  return writeImportOutput(args, io, {
    ...result,
    unsupportedLines: result.unsupported.map((u) => `${u.event}${u.matcher ? ` [${u.matcher}]` : ''} ${u.type} ${u.what}: ${u.why}`),
    warnings: [...result.warnings, ...extraWarnings],
    source,
  });
}
