import { InputError, OptionError } from '../domain/errors.js';

/**
 * The ledger and the domain name the option that is wrong as their API spells it (`before`,
 * `batchSize`); the CLI names its own flag. Returns the error to throw: an OptionError for one
 * of `flags` becomes the same problem under the flag's name, anything else is returned as is.
 */
export function namingFlag(error: unknown, flags: Readonly<Record<string, string>>): unknown {
  if (error instanceof OptionError) {
    const flag = flags[error.option];
    if (flag !== undefined) return new InputError(`${flag}: ${error.problem}`, { cause: error });
  }
  return error;
}
