import * as z from 'zod';
import { ConfigError } from './errors.js';

/**
 * What the ledger redacts before storing (docs/integrity.md). Hooks always see the original.
 * `defaults` (true unless set to false) applies the built-in rules for common secrets.
 */
export const redactSchema = z.strictObject({
  defaults: z.boolean().optional(),
  /** JSON paths replaced whole, relative to the invocation: `toolInput.env.API_TOKEN`, `*` one key, `**` any depth. */
  paths: z.array(z.string().trim().min(1, 'a redaction path must not be blank')).optional(),
  /** Regular expressions replaced in every string; named groups `pre`/`post` are kept. */
  patterns: z
    .array(
      z.strictObject({
        name: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a pattern name is letters, digits, _, . or -'),
        regex: z.string().min(1, 'regex must not be blank'),
        flags: z
          .string()
          .regex(/^[dgimsuyv]*$/, 'flags must be JavaScript regular expression flags')
          .optional(),
      }),
    )
    .optional(),
});

/** A hook set's redaction configuration (the `redact` field): the one type for it, from its schema. */
export type RedactConfig = z.output<typeof redactSchema>;

/** One pattern rule as configured. */
export type PatternSpec = NonNullable<RedactConfig['patterns']>[number];

/** A compiled pattern rule. */
export interface PatternRule {
  name: string;
  regex: RegExp;
}

/** A redaction rule that cannot be used; the message names it (`redact.patterns[0] ("bad"): …`). Exit 2. */
export class RedactionRuleError extends ConfigError {}

/**
 * The one check of a redaction configuration, used by hook-set loading and by the ledger's
 * Redactor alike: every pattern compiles and cannot match the empty string (a rule that
 * matches nothing visible would mark every string), every path has no empty segment. Returns
 * the compiled rules.
 * @throws RedactionRuleError naming the rule.
 */
export function compileRedaction(config: RedactConfig): { patterns: PatternRule[]; paths: string[][] } {
  const patterns = (config.patterns ?? []).map((p, i) => compilePattern(p, `redact.patterns[${i}] ("${p.name}")`));
  const paths = (config.paths ?? []).map((path, i) => {
    const segments = path.split('.');
    if (segments.some((s) => s.trim() === '')) throw new RedactionRuleError(`redact.paths[${i}]: "${path}" has an empty segment`);
    return segments;
  });
  return { patterns, paths };
}

/** Compiles one pattern (global: every match is replaced); `label` names it in the error. */
export function compilePattern(spec: PatternSpec, label: string): PatternRule {
  if (!/^[A-Za-z0-9_.-]+$/.test(spec.name)) throw new RedactionRuleError(`${label}: a pattern name is letters, digits, _, . or -`);
  const flags = spec.flags ?? '';
  let regex: RegExp;
  try {
    regex = new RegExp(spec.regex, flags.includes('g') ? flags : `${flags}g`);
  } catch (error) {
    throw new RedactionRuleError(`${label}: regex is not a valid regular expression (${(error as Error).message})`);
  }
  if (regex.test('')) throw new RedactionRuleError(`${label}: regex matches the empty string`);
  regex.lastIndex = 0;
  return { name: spec.name, regex };
}
