import { InputError } from './errors.js';

/**
 * The one parser for every time bound a user gives (report `--since/--until`, `prune
 * --before`, the HTTP API's `since`/`until`), so that retention deletes by exactly the instant
 * the reports show. It never reads the process time zone: a date or date-time without a zone is
 * UTC, like every time hookledger prints.
 */

/** Relative units: `ms`, `s`, `m`/`min` (minutes), `h`, `d`, `w`, `y` (365 days). */
const UNIT_MS = {
  ms: 1,
  s: 1000,
  m: 60_000,
  min: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 365 * 86_400_000,
} as const;
const RELATIVE = /^(\d+)\s*(ms|s|min|m|h|d|w|y)$/;

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3})\d*)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;
/** The range of a JavaScript Date: a bound outside it cannot be printed (or compared usefully). */
const MAX_TIME_MS = 8_640_000_000_000_000;

/** The forms `parseTimeBound` accepts, for help text and error messages. */
export const TIME_BOUND_FORMS =
  'an ISO date like 2026-11-01 or 2026-11-01T09:00 (UTC unless a zone is given), or an age like 7d, 12h, 30m, 1y';

/**
 * Parses a time bound to ms since the epoch: an ISO date or date-time (`2026-11-01`,
 * `2026-11-01T12:00`, `2026-11-01T12:00:00+02:00`), a relative age (`180d`, `12h`, `30m` or
 * `30min`, `2w`, `1y`: that long before `now`), or ms since the epoch (10+ digits). A date that
 * does not exist (2026-02-30, 24:00) is an error, never rolled over.
 *
 * @throws InputError naming the value and what is wrong (no flag: the caller names its own).
 */
export function parseTimeBound(text: string, now: number = Date.now()): number {
  const trimmed = text.trim();
  const ms = parseTime(trimmed, now);
  if (!Number.isSafeInteger(ms) || Math.abs(ms) > MAX_TIME_MS) {
    throw new InputError(`"${trimmed}" is out of range (a time between the years -271821 and 275760)`);
  }
  return ms;
}

/**
 * `parseTimeBound` for a value with a name (a flag `--since`, a query parameter `since`): the
 * error names it, `--since: "2026-02-30" is not a date: no such day or time`.
 */
export function parseNamedTimeBound(name: string, text: string, now: number = Date.now()): number {
  try {
    return parseTimeBound(text, now);
  } catch (error) {
    if (error instanceof InputError) throw new InputError(`${name}: ${error.message}`, { cause: error });
    throw error;
  }
}

function parseTime(trimmed: string, now: number): number {
  const relative = RELATIVE.exec(trimmed);
  if (relative) return now - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
  if (/^\d{10,}$/.test(trimmed)) return Number(trimmed);
  const iso = ISO.exec(trimmed);
  if (!iso) throw new InputError(`"${trimmed}" is not a date (use ${TIME_BOUND_FORMS})`);
  const [year, month, day, hour = 0, minute = 0, second = 0] = iso
    .slice(1, 7)
    .map((v) => (v === undefined ? undefined : Number(v))) as number[];
  const millis = iso[7] === undefined ? 0 : Number(iso[7].padEnd(3, '0'));
  const date = new Date(0);
  date.setUTCFullYear(year!, month! - 1, day!);
  date.setUTCHours(hour, minute, second, millis);
  // Date rolls 2026-02-30 over to March 2 and 24:00 to the next day: compare the fields back.
  if (
    date.getUTCMonth() !== month! - 1 ||
    date.getUTCDate() !== day! ||
    date.getUTCHours() !== hour ||
    date.getUTCMinutes() !== minute ||
    date.getUTCSeconds() !== second
  ) {
    throw new InputError(`"${trimmed}" is not a date: no such day or time`);
  }
  const zone = iso[8];
  if (zone === undefined || zone.toUpperCase() === 'Z') return date.getTime();
  const [, sign, zh, zm] = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  if (Number(zh) > 23 || Number(zm) > 59) throw new InputError(`"${trimmed}" has no valid zone offset`);
  const offsetMs = (Number(zh) * 60 + Number(zm)) * 60_000;
  return date.getTime() - (sign === '+' ? offsetMs : -offsetMs);
}
