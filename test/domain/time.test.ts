import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/domain/errors.js';
import { parseTimeBound } from '../../src/domain/time.js';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 10, 23, 12);

describe('parseTimeBound (the one parser for --since, --until, --before and the API)', () => {
  it('reads a zone-less date or date-time as UTC and honours an explicit zone', () => {
    expect(parseTimeBound('2026-11-01T12:00')).toBe(Date.UTC(2026, 10, 1, 12));
    expect(parseTimeBound('2026-11-01 12:00:30')).toBe(Date.UTC(2026, 10, 1, 12, 0, 30));
    expect(parseTimeBound('2026-11-01T12:00:00.25Z')).toBe(Date.UTC(2026, 10, 1, 12, 0, 0, 250));
    expect(parseTimeBound('2026-11-01')).toBe(Date.UTC(2026, 10, 1));
    expect(parseTimeBound('2026-11-01T12:00:00+02:00')).toBe(Date.UTC(2026, 10, 1, 10));
    expect(parseTimeBound('2026-11-01T12:00-0530')).toBe(Date.UTC(2026, 10, 1, 17, 30));
    expect(parseTimeBound('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
    expect(parseTimeBound(' 1763899200000 ')).toBe(1763899200000);
  });

  it('reads every relative unit the reports and prune use, before now', () => {
    expect(parseTimeBound('500ms', NOW)).toBe(NOW - 500);
    expect(parseTimeBound('30s', NOW)).toBe(NOW - 30_000);
    expect(parseTimeBound('30m', NOW)).toBe(NOW - 30 * 60_000);
    expect(parseTimeBound('30min', NOW)).toBe(NOW - 30 * 60_000);
    expect(parseTimeBound('12h', NOW)).toBe(NOW - 12 * 3_600_000);
    expect(parseTimeBound('180d', NOW)).toBe(NOW - 180 * DAY);
    expect(parseTimeBound('2w', NOW)).toBe(NOW - 14 * DAY);
    expect(parseTimeBound('1y', NOW)).toBe(NOW - 365 * DAY);
  });

  it('refuses impossible dates instead of rolling them over, and names no flag', () => {
    expect(() => parseTimeBound('2026-02-30')).toThrow(new InputError('"2026-02-30" is not a date: no such day or time'));
    expect(() => parseTimeBound('2025-02-29')).toThrow(/no such day or time/);
    expect(() => parseTimeBound('2026-11-01T24:00')).toThrow(/no such day or time/);
    expect(() => parseTimeBound('2026-11-01T12:60')).toThrow(/no such day or time/);
    expect(() => parseTimeBound('2026-11-01T12:00+24:00')).toThrow(/no valid zone offset/);
    expect(() => parseTimeBound('99999999999999999')).toThrow(/out of range/);
    expect(() => parseTimeBound('six months')).toThrow(/^"six months" is not a date \(use an ISO date/);
    expect(() => parseTimeBound('3 fortnights')).toThrow(InputError);
  });
});
