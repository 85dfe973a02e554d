import type { ParseArgsConfig } from 'node:util';
import type { CliIo } from './io.js';

/** One `hookledger <name>` command. Each lives in its own file under cli/commands/, named after it. */
export interface Command {
  summary: string;
  /** Usage line(s) after `hookledger`, and a description of each option. */
  usage: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Returns the process exit code. Throws HookledgerError for anything the user must fix. */
  run(args: CommandArgs, io: CliIo): Promise<number>;
}

export interface CommandArgs {
  values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

/** Flags every command that reads or writes a ledger accepts. */
export const ledgerOptions = {
  db: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const configOption = { config: { type: 'string', short: 'c' } } as const;

/** `--otel URL`: export telemetry over OTLP/HTTP to this base endpoint (agent commands; docs/telemetry.md). */
export const otelOption = { otel: { type: 'string' } } as const;

/** The usage line of `--otel`, for agent commands' help. */
export const OTEL_USAGE = `  --otel URL  export spans and log records over OTLP/HTTP (else $OTEL_EXPORTER_OTLP_ENDPOINT; docs/telemetry.md)`;

/** A string flag's value, or undefined. */
export function stringFlag(args: CommandArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function boolFlag(args: CommandArgs, name: string): boolean {
  return args.values[name] === true;
}
