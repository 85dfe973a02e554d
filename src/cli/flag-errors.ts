import { InputError, OptionError } from '../domain/errors.js';
import { parseTimeBound } from '../domain/time.js';

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

/** A time flag through the one time parser (domain/time.ts), its error naming the flag. */
export function timeFlag(text: string, flag: string, now: number): number {
  try {
    return parseTimeBound(text, now);
  } catch (error) {
    if (error instanceof InputError) throw new InputError(`${flag}: ${error.message}`, { cause: error });
    throw error;
  }
}
