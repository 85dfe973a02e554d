import { formatDuration, table } from './format.js';
import type { Paint } from './paint.js';
import type { HealthReport, HookHealth } from '../ledger/queries/health.js';
import { shortTime } from './denials-text.js';

/** What makes a hook stand out in `hookledger hooks`. */
export interface HealthThresholds {
  /** p95 at or above this is slow, µs. Default 500 ms. */
  slowUs: number;
  /** (failures + timeouts) / runs at or above this is failing. Default 1%. */
  failingRate: number;
}

export const DEFAULT_THRESHOLDS: HealthThresholds = { slowUs: 500_000, failingRate: 0.01 };

/** Why a hook stands out, worst first; empty when it does not. */
export function healthFlags(h: HookHealth, t: HealthThresholds = DEFAULT_THRESHOLDS): string[] {
  const flags: string[] = [];
  if (h.runs > 0 && h.failureRate >= t.failingRate) flags.push(`failing ${(h.failureRate * 100).toFixed(1)}%`);
  if (h.p95Us !== null && h.p95Us >= t.slowUs) flags.push('slow');
  if (h.interrupted > 0) flags.push(`${h.interrupted} interrupted`);
  return flags;
}

/** 1234 → 1,234; 1234567 → 1.23M: counts stay narrow. */
function n(value: number): string {
  if (value >= 10_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (value >= 1_000_000) return `${(value / 1_000_000).toFixed(2)}M`;
  if (value >= 100_000) return `${Math.round(value / 1000)}k`;
  return String(value);
}

/**
 * The text form of `hookledger hooks`: two aligned tables that fit 80 columns, decisions and
 * then health (failures, timeouts, timing), worst hooks first; slow and failing hooks are
 * flagged in words (and in colour on a terminal).
 */
export function renderHealth(report: HealthReport, paint: Paint, thresholds: HealthThresholds = DEFAULT_THRESHOLDS, width = 80): string {
  const days = (report.until - report.since) / 86_400_000;
  const lines = [
    paint(
      'bold',
      `Hook health, ${shortTime(report.since)} → ${shortTime(report.until)} UTC (${days >= 1 ? `${Math.round(days * 10) / 10} days` : `${Math.round(days * 24 * 10) / 10} hours`})`,
    ),
    '',
  ];
  if (report.hooks.length === 0) {
    lines.push('no hook ran in this window');
    return lines.join('\n');
  }
  const decisions = table(
    ['HOOK', 'RUNS', 'ALLOW', 'DENY', 'ASK', 'MODIFY', 'DECIDED', 'SKIPPED'],
    report.hooks.map((h) => [h.hookId, n(h.runs), n(h.allows), n(h.denials), n(h.asks), n(h.modifies), n(h.decisive), n(h.skips)]),
    width,
  ).split('\n');
  lines.push(paint('bold', decisions[0]!), ...decisions.slice(1), '');
  const health = table(
    ['HOOK', 'FAIL', 'T/O', 'OBS!', 'P50', 'P95', 'MAX', 'NOTE'],
    report.hooks.map((h) => {
      const flags = healthFlags(h, thresholds);
      const bad = flags.length > 0;
      const slow = h.p95Us !== null && h.p95Us >= thresholds.slowUs;
      return [
        bad ? paint('bold', h.hookId) : h.hookId,
        h.failures > 0 ? paint('red', n(h.failures)) : '0',
        h.timeouts > 0 ? paint('red', n(h.timeouts)) : '0',
        h.observeOnlyViolations > 0 ? paint('yellow', n(h.observeOnlyViolations)) : '0',
        formatDuration(h.p50Us),
        slow ? paint('yellow', formatDuration(h.p95Us)) : formatDuration(h.p95Us),
        formatDuration(h.maxUs),
        flags.length > 0 ? paint(h.failureRate >= thresholds.failingRate ? 'red' : 'yellow', flags.join(', ')) : '',
      ];
    }),
    width,
  ).split('\n');
  lines.push(paint('bold', health[0]!), ...health.slice(1), '');
  lines.push(paint('dim', 'OBS! = an observer answered deny, ask or modify (not obeyed)'));
  lines.push(paint('dim', 'P50/P95 = nearest-rank percentiles of the runs in the window'));
  return lines.join('\n');
}
