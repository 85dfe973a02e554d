/**
 * Every error hookledger raises on purpose. `code` is stable and machine-readable; the
 * message is one line a user can act on (what is wrong and where). The CLI maps `exitCode`
 * to the process exit status.
 */
export class HookledgerError extends Error {
  /** Process exit status the CLI uses for this error. */
  readonly exitCode: number = 1;
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A hook set, a flag or a config file is invalid. Exit 2. */
export class ConfigError extends HookledgerError {
  override readonly exitCode = 2;
  constructor(message: string, options?: { cause?: unknown }) {
    super('config_invalid', message, options);
  }
}

/** An invocation, payload or request body is malformed. Exit 2. */
export class InputError extends HookledgerError {
  override readonly exitCode = 2;
  constructor(message: string, options?: { cause?: unknown }) {
    super('input_invalid', message, options);
  }
}

/**
 * A value given to a library function is invalid. `option` names it as the API spells it
 * (`before`, `batchSize`, `reason`), so each front end names its own flag or field; the
 * message is `option: problem`. Exit 2.
 */
export class OptionError extends InputError {
  constructor(
    readonly option: string,
    readonly problem: string,
  ) {
    super(`${option}: ${problem}`);
  }
}

/** A command-line usage error (unknown flag, missing argument). Exit 2. */
export class UsageError extends HookledgerError {
  override readonly exitCode = 2;
  constructor(message: string) {
    super('usage', message);
  }
}

/** The ledger cannot be opened, read or written (locked, read-only, disk full, corrupt). Exit 3. */
export class LedgerError extends HookledgerError {
  override readonly exitCode = 3;
  constructor(code: `ledger_${string}`, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** A record asked for does not exist. Exit 4. */
export class NotFoundError extends HookledgerError {
  override readonly exitCode = 4;
  constructor(message: string) {
    super('not_found', message);
  }
}

/** The ledger's integrity check failed (issue: tamper evidence). Exit 5. */
export class IntegrityError extends HookledgerError {
  override readonly exitCode = 5;
  constructor(message: string) {
    super('integrity_failed', message);
  }
}

/** One line for anything thrown, whatever it is (Error, string, object, undefined). */
export function describeThrown(thrown: unknown): string {
  if (thrown instanceof Error) return thrown.message || thrown.name;
  if (typeof thrown === 'string') return thrown;
  try {
    const text = JSON.stringify(thrown);
    return text === undefined ? String(thrown) : `non-Error value thrown: ${text.slice(0, 200)}`;
  } catch {
    return `non-Error value thrown: ${String(thrown)}`;
  }
}
