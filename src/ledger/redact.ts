/**
 * Redaction: secrets are replaced with a marker before anything is stored, while hooks still
 * see the original. Pure functions; the write path applies them (ledger/write.ts).
 *
 * Three kinds of rule:
 * - patterns: regular expressions over every string value (built-in defaults for common
 *   secrets, plus configured ones). Named groups `pre` and `post` are context kept around the
 *   secret: only the text between them is replaced (`Bearer <token>` keeps `Bearer `).
 * - paths: JSON paths whose whole value is replaced (`toolInput.env.API_TOKEN`; `*` matches one
 *   key or index, `**` any number of them).
 * - secret fields (a default): string values under keys such as `password`, `api_key`,
 *   `client_secret`, `authorization` or `*_TOKEN`.
 */

import { compilePattern, compileRedaction, type PatternRule, type RedactConfig } from '../domain/redaction.js';

/** What redaction did to one value. */
export interface Redacted<T> {
  value: T;
  /** Paths (dot-separated, array indices as numbers) whose stored value differs from the original. */
  paths: string[];
}

/** The marker that replaces a secret. */
export const marker = (name: string): string => `[REDACTED:${name}]`;

/**
 * Built-in patterns. Each is specific enough to run over every string of every payload
 * (a coding agent's tool inputs are full of long base64-looking strings that are not secrets,
 * so an unanchored "40 characters of base64" rule is not used for AWS secret keys).
 */
export const DEFAULT_PATTERNS: readonly { name: string; regex: string; flags?: string }[] = [
  {
    name: 'private_key',
    regex: '-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\\s\\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)',
  },
  { name: 'aws_access_key', regex: '\\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b' },
  {
    name: 'aws_secret_key',
    regex: '(?<pre>aws_?secret_?(?:access_?)?key["\']?\\s*[:=]\\s*["\']?)[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+])',
    flags: 'i',
  },
  { name: 'gcp_api_key', regex: '\\bAIza[0-9A-Za-z_\\-]{35}(?![0-9A-Za-z_\\-])' },
  { name: 'azure_storage_key', regex: '(?<pre>AccountKey=)[A-Za-z0-9+/]{86}==' },
  { name: 'azure_sas_signature', regex: '(?<pre>[?&]sig=)[A-Za-z0-9%+/=]{20,}' },
  { name: 'github_token', regex: '\\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})' },
  { name: 'slack_token', regex: '\\bxox[abposr]-[A-Za-z0-9-]{10,}' },
  { name: 'llm_api_key', regex: '\\bsk-(?:ant-|proj-)?[A-Za-z0-9_\\-]{20,}' },
  { name: 'stripe_key', regex: '\\b[sr]k_live_[0-9A-Za-z]{20,}' },
  { name: 'bearer_token', regex: '(?<pre>\\bBearer\\s+)[A-Za-z0-9\\-._~+/]{8,}=*', flags: 'i' },
  { name: 'basic_auth', regex: '(?<pre>\\bAuthorization:\\s*Basic\\s+)[A-Za-z0-9+/]{8,}=*', flags: 'i' },
  { name: 'url_password', regex: '(?<pre>\\b[a-zA-Z][a-zA-Z0-9+.\\-]*://[^\\s:/@"\'<>\\[\\]]+:)[^\\s@/"\'<>\\[\\]]+(?<post>@)' },
  {
    name: 'password_assignment',
    regex:
      '(?<pre>\\b(?:[A-Za-z0-9]+[_-])*(?:password|passwd|pwd|secret|api[_-]?key|apikey|access[_-]?key|token|auth[_-]?token|client[_-]?secret)["\']?\\s*[:=](?!=)\\s*["\']?)(?!\\[REDACTED)[^\\s"\'&,;)}\\]]+',
    flags: 'i',
  },
];

/** The built-in patterns, compiled once and shared (redactString resets each one's lastIndex before use). */
const DEFAULT_RULES: readonly PatternRule[] = DEFAULT_PATTERNS.map((p) => compilePattern(p, `built-in pattern "${p.name}"`));

/** Keys whose string values are secrets whatever they look like (a default rule). */
const SECRET_KEY =
  /^(?:.*[_-])?(?:password|passwd|secret|api[_-]?key|apikey|access[_-]?key|private[_-]?key|client[_-]?secret|authorization|token|auth[_-]?token|access[_-]?token|refresh[_-]?token|session[_-]?token)$/i;

/**
 * One case-insensitive alternation of every built-in pattern (context groups made plain): a
 * string it does not match cannot match any of them, so most strings cost one scan instead of
 * fourteen. Case-insensitive matching only widens what a pattern matches, so this is a safe
 * filter for the case-sensitive ones too. Configured patterns are always run one by one.
 */
const DEFAULTS_FILTER = new RegExp(DEFAULT_PATTERNS.map((p) => `(?:${p.regex.replace(/\(\?<(?:pre|post)>/g, '(?:')})`).join('|'), 'i');

/** Whether a key names a secret, by key: payloads repeat the same few keys on every event. */
const secretKeyCache = new Map<string, boolean>();
const SECRET_KEY_CACHE_MAX = 4096;
function isSecretKey(key: string): boolean {
  let secret = secretKeyCache.get(key);
  if (secret === undefined) {
    secret = SECRET_KEY.test(key);
    // Bounded: a payload with endless distinct keys must not grow memory.
    if (secretKeyCache.size < SECRET_KEY_CACHE_MAX) secretKeyCache.set(key, secret);
  }
  return secret;
}

/** Deeper values are replaced whole: a cyclic or hostile value must not overflow the stack. */
const MAX_DEPTH = 200;
/** Strings shorter than this cannot hold any built-in secret; skipping them keeps the common case cheap. */
const MIN_SECRET_LENGTH = 8;

/** A compiled set of rules. */
export class Redactor {
  readonly patterns: readonly PatternRule[];
  private readonly pathRules: readonly string[][];
  private readonly secretKeys: boolean;
  private readonly minLength: number;
  /** How many of `patterns` are the built-ins (they come first), which DEFAULTS_FILTER screens. */
  private readonly defaultCount: number;
  /** Objects on the current walk path: a cycle is left as it is (the ledger stores it as unserializable). */
  private readonly ancestors = new Set<object>();
  /**
   * The path of the value being walked, as stored and as rules see it. One array each, pushed and
   * popped, rather than a copy per value: most strings are redacted nowhere and their path never
   * needs to be written out.
   */
  private at: string[] = [];
  private matchAt: string[] = [];

  /** @throws RedactionRuleError naming a rule that cannot be used (domain/redaction.ts). */
  constructor(config: RedactConfig = {}) {
    const defaults = config.defaults ?? true;
    const configured = compileRedaction(config);
    this.patterns = [...(defaults ? DEFAULT_RULES : []), ...configured.patterns];
    this.defaultCount = defaults ? DEFAULT_RULES.length : 0;
    this.pathRules = configured.paths;
    this.secretKeys = defaults;
    // A configured pattern may match short strings; only the built-ins justify the shortcut.
    this.minLength = config.patterns && config.patterns.length > 0 ? 1 : MIN_SECRET_LENGTH;
  }

  /** True when no rule is configured at all (nothing to do). */
  get empty(): boolean {
    return this.patterns.length === 0 && this.pathRules.length === 0 && !this.secretKeys;
  }

  /**
   * Redacts a JSON-like value. `at` is the path of the value (reported, and matched by path
   * rules); `matchAt` overrides the path the rules see (a modified tool input is matched as
   * `toolInput` but reported where it is stored). Never mutates `value`.
   */
  redact<T>(value: T, at: string[] = [], matchAt: string[] = at): Redacted<T> {
    if (this.empty) return { value, paths: [] };
    const paths: string[] = [];
    this.ancestors.clear();
    this.at = [...at];
    this.matchAt = [...matchAt];
    const out = this.walk(value, paths, 0, false) as T;
    return { value: out, paths };
  }

  /** Redacts a free-text field (a message, a failure detail). */
  redactText(text: string | null, at: string[]): Redacted<string | null> {
    if (text === null || this.empty) return { value: text, paths: [] };
    return this.redact(text, at);
  }

  private walk(value: unknown, paths: string[], depth: number, underSecretKey: boolean): unknown {
    const { at, matchAt } = this;
    if (this.pathRules.length > 0 && matchAt.length > 0 && this.pathRules.some((rule) => globMatch(rule, 0, matchAt, 0))) {
      if (value === null || value === undefined) return value;
      paths.push(at.join('.'));
      return marker('path');
    }
    if (typeof value === 'string') {
      if (underSecretKey && value !== '' && !value.startsWith('[REDACTED:')) {
        paths.push(at.join('.'));
        return marker('secret_field');
      }
      const redacted = this.redactString(value);
      if (redacted !== value) paths.push(at.join('.'));
      return redacted;
    }
    if (value === null || typeof value !== 'object') return value;
    if (this.ancestors.has(value)) return value;
    if (depth >= MAX_DEPTH) {
      paths.push(at.join('.'));
      return marker('too_deep');
    }
    if (Array.isArray(value)) {
      let copy: unknown[] | null = null;
      this.ancestors.add(value);
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i];
        at.push(String(i));
        matchAt.push(String(i));
        const next = this.walk(item, paths, depth + 1, false);
        at.pop();
        matchAt.pop();
        if (next !== item) {
          copy ??= value.slice();
          copy[i] = next;
        }
      }
      this.ancestors.delete(value);
      return copy ?? value;
    }
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      // A class instance (Date, a library object): redact what JSON would store.
      let plain: unknown;
      try {
        const text = JSON.stringify(value);
        plain = text === undefined ? undefined : (JSON.parse(text) as unknown);
      } catch {
        return value;
      }
      if (plain === null || typeof plain !== 'object' || Object.getPrototypeOf(plain) !== Object.prototype) {
        return this.walk(plain, paths, depth + 1, underSecretKey);
      }
      const walked = this.walk(plain, paths, depth + 1, underSecretKey);
      return walked === plain ? value : walked;
    }
    let copy: Record<string, unknown> | null = null;
    const record = value as Record<string, unknown>;
    this.ancestors.add(record);
    for (const key of Object.keys(record)) {
      let item: unknown;
      try {
        item = record[key];
      } catch {
        // A getter that throws: JSON could not store it either; keep nothing of it.
        copy ??= copyRecord(record);
        copy[key] = marker('unreadable');
        paths.push([...at, key].join('.'));
        continue;
      }
      const secret = this.secretKeys && typeof item === 'string' && isSecretKey(key);
      at.push(key);
      matchAt.push(key);
      const next = this.walk(item, paths, depth + 1, secret);
      at.pop();
      matchAt.pop();
      if (next !== item) {
        copy ??= copyRecord(record);
        copy[key] = next;
      }
    }
    this.ancestors.delete(record);
    return copy ?? value;
  }

  /** Applies every pattern to one string; returns the same string when nothing matched. */
  redactString(text: string): string {
    if (text.length < this.minLength) return text;
    let out = text;
    const first = this.defaultCount > 0 && !DEFAULTS_FILTER.test(text) ? this.defaultCount : 0;
    for (let i = first; i < this.patterns.length; i++) {
      const { name, regex } = this.patterns[i]!;
      regex.lastIndex = 0;
      if (!regex.test(out)) continue;
      regex.lastIndex = 0;
      out = out.replace(regex, (...args: unknown[]) => {
        const last = args[args.length - 1];
        const groups = (typeof last === 'object' && last !== null ? last : {}) as { pre?: string; post?: string };
        return `${groups.pre ?? ''}${marker(name)}${groups.post ?? ''}`;
      });
    }
    return out;
  }
}

/** A shallow copy in which a getter that throws becomes a marker instead of an exception. */
function copyRecord(record: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    try {
      copy[key] = record[key];
    } catch {
      copy[key] = marker('unreadable');
    }
  }
  return copy;
}

/** `*` matches one segment, `**` any number (including none). */
function globMatch(rule: string[], ri: number, path: string[], pi: number): boolean {
  while (ri < rule.length) {
    const seg = rule[ri]!;
    if (seg === '**') {
      for (let k = pi; k <= path.length; k++) if (globMatch(rule, ri + 1, path, k)) return true;
      return false;
    }
    if (pi >= path.length || (seg !== '*' && seg !== path[pi])) return false;
    ri++;
    pi++;
  }
  return pi === path.length;
}

/** Redacts one value with a configuration (convenience over `new Redactor(config).redact`). */
export function redact<T>(value: T, config: RedactConfig = {}): Redacted<T> {
  return new Redactor(config).redact(value);
}
