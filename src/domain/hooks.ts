import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import * as z from 'zod';
import { ConfigError } from './errors.js';
import type { Invocation } from './invocation.js';
import { CAPABILITIES, MODES, type Capability, type Mode } from './outcomes.js';
import { pointSchema, TOOL_POINTS, type Point } from './points.js';
import { compileRedaction, redactSchema, RedactionRuleError, type RedactConfig } from './redaction.js';
import { formatIssues, issueMessage, type HookResultInput } from './results.js';

/** What an in-process hook receives besides the invocation. */
export interface HookContext {
  /** Fires when the hook's timeout elapses (or the runner shuts down); stop work when it does. */
  signal: AbortSignal;
  /** True when the invocation is being replayed against this hook set: avoid side effects. */
  replay: boolean;
  hookId: string;
  timeoutMs: number;
}

/** An in-process hook: receives the invocation (with earlier hooks' modifications applied). */
export type HookFunction = (invocation: Invocation, ctx: HookContext) => HookResultInput | Promise<HookResultInput>;

export const STRATEGIES = ['deny_wins', 'first_decision_wins'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export const FAILURE_POLICIES = ['deny', 'allow'] as const;
export type FailurePolicy = (typeof FAILURE_POLICIES)[number];

/** Where an in-process hook runs: this thread, or a worker thread it can be terminated in. */
export const ISOLATIONS = ['main', 'worker'] as const;
export type Isolation = (typeof ISOLATIONS)[number];

const idSchema = z.string().trim().min(1, 'id must not be blank');

/**
 * The wire protocol an external hook speaks: Claude Code's (the default: exit 2 denies, JSON
 * in Claude's shape) or meerkat's (the invocation JSON in, `{"decision": ...}` out, any
 * non-zero exit a failure), so either agent's hook scripts run unchanged.
 */
export const WIRE_PROTOCOLS = ['claude', 'meerkat'] as const;
export type WireProtocol = (typeof WIRE_PROTOCOLS)[number];
const protocolSchema = z.enum(WIRE_PROTOCOLS).optional();

const commandSchema = z.union([
  z.string().trim().min(1, 'command must not be blank'),
  z.strictObject({
    /** Program to run; with `args` it is executed directly, without a shell. */
    command: z.string().trim().min(1, 'command must not be blank'),
    args: z.array(z.string()).optional(),
    env: z.record(z.string(), z.string()).optional(),
    cwd: z.string().optional(),
    protocol: protocolSchema,
  }),
]);

const httpSchema = z.union([
  z.url({ protocol: /^https?$/, error: 'http must be an http(s) URL' }),
  z.strictObject({
    url: z.url({ protocol: /^https?$/, error: 'http.url must be an http(s) URL' }),
    headers: z.record(z.string(), z.string()).optional(),
    protocol: protocolSchema,
  }),
]);

const workerSchema = z.strictObject({
  /** Path of an ES module (absolute, or relative to the config file) exporting the hook function. */
  module: z.string().min(1),
  /** Export name; default `default`. */
  export: z.string().optional(),
});

const hookFieldsSchema = {
  id: idSchema,
  point: z.union([pointSchema, z.array(pointSchema).min(1, 'point list must not be empty')]),
  match: z.string().optional(),
  priority: z.number().int('priority must be an integer').optional(),
  mode: z.enum(MODES).optional(),
  capability: z.enum(CAPABILITIES).optional(),
  timeoutMs: z.number().int('timeoutMs must be an integer').positive('timeoutMs must be positive').max(3_600_000).optional(),
  onFailure: z.enum(FAILURE_POLICIES).optional(),
  /** false keeps the hook in the set (and its fingerprint) without running it, like meerkat's `enabled = false`. */
  enabled: z.boolean().optional(),
  description: z.string().optional(),
  command: commandSchema.optional(),
  http: httpSchema.optional(),
  worker: workerSchema.optional(),
};

/** One hook in a JSON hook-set file (no in-process functions). */
export const declarativeHookSchema = z.strictObject(hookFieldsSchema);

/** One hook in a TypeScript hook set: the declarative fields plus an optional in-process `run`. */
export const hookSchema = z.strictObject({
  ...hookFieldsSchema,
  run: z.custom<HookFunction>((v) => typeof v === 'function', 'run must be a function').optional(),
  /**
   * `worker` runs `run` in a worker thread, terminated at the timeout: the only way to stop a
   * hook that blocks the event loop. The function is rebuilt there from its source text, so it
   * must be self-contained (no closures over outer variables or imports). Default `main`.
   */
  isolation: z.enum(ISOLATIONS).optional(),
});

const defaultsSchema = z.strictObject({
  priority: z.number().int().optional(),
  timeoutMs: z.number().int().positive().max(3_600_000).optional(),
  mode: z.enum(MODES).optional(),
  capability: z.enum(CAPABILITIES).optional(),
});

const hookSetFields = {
  name: z.string().trim().min(1, 'name must not be blank'),
  version: z.union([z.string(), z.number()]).transform(String).optional(),
  strategy: z.enum(STRATEGIES).optional(),
  defaults: defaultsSchema.optional(),
  /** Maximum background hooks running at once; more wait in a queue. Default 8. */
  backgroundConcurrency: z.number().int().positive().optional(),
  /** Secrets to replace before anything is stored (built-in defaults apply when omitted). */
  redact: redactSchema.optional(),
};

/** A JSON hook-set file (docs/design.md §8). */
export const declarativeHookSetSchema = z.strictObject({
  $schema: z.string().optional(),
  ...hookSetFields,
  hooks: z.array(declarativeHookSchema),
});

/** A hook set as written in TypeScript with `defineHooks`. */
export const hookSetSchema = z.strictObject({ ...hookSetFields, hooks: z.array(hookSchema) });

export type HookDefinition = z.input<typeof hookSchema>;
export type HookSetDefinition = z.input<typeof hookSetSchema>;

/** How a resolved hook is executed. */
export type RuntimeSpec =
  | { kind: 'in_process'; fn: HookFunction; isolation?: 'worker' }
  | { kind: 'command'; command: string; args: string[] | null; env: Record<string, string>; cwd: string | null; protocol: WireProtocol }
  | { kind: 'http'; url: string; headers: Record<string, string>; protocol: WireProtocol }
  | { kind: 'worker'; module: string; exportName: string };

/** A validated hook with every default applied. */
export interface ResolvedHook {
  id: string;
  points: Point[];
  match: string | null;
  /** Returns true when the hook applies to this tool name (always true for non-tool points). */
  matches: (point: Point, toolName: string | null) => boolean;
  priority: number;
  mode: Mode;
  capability: Capability;
  timeoutMs: number;
  onFailure: FailurePolicy;
  /** A disabled hook is never selected. */
  enabled: boolean;
  description: string | null;
  runtime: RuntimeSpec;
}

/** A validated, fingerprinted hook set, ready for a runner. */
export interface HookSet {
  name: string;
  version: string;
  strategy: Strategy;
  backgroundConcurrency: number;
  hooks: ResolvedHook[];
  /** sha-256 of `canonical`. */
  fingerprint: string;
  /** Canonical declarative form (sorted keys), including each handler's source text or command. */
  canonical: string;
  /** Redaction rules, when the hook set configures them; absent means the built-in defaults. */
  redact?: RedactConfig;
}

export const DEFAULT_PRIORITY = 100;
export const DEFAULT_TIMEOUT_MS = 5000;
export const DEFAULT_BACKGROUND_CONCURRENCY = 8;

/** Characters that make a matcher a list of exact names (Claude Code's rule). */
const EXACT_MATCHER = /^[A-Za-z0-9_\-, |]*$/;

/**
 * Compiles a tool-name matcher with Claude Code's rules: empty or `*` matches all; letters,
 * digits, `_`, `-`, spaces, `|` and `,` form a list of exact names; anything else is an
 * unanchored, case-sensitive regular expression.
 */
export function compileMatcher(match: string | null | undefined): (toolName: string | null) => boolean {
  if (match === undefined || match === null || match.trim() === '' || match.trim() === '*') return () => true;
  if (EXACT_MATCHER.test(match)) {
    const names = new Set(
      match
        .split(/[|,]/)
        .map((n) => n.trim())
        .filter((n) => n.length > 0),
    );
    return (toolName) => toolName !== null && names.has(toolName);
  }
  const regex = new RegExp(match);
  return (toolName) => toolName !== null && regex.test(toolName);
}

/**
 * Declares a hook set in TypeScript with full types. Validation happens here, so a bad
 * hook set fails at import time with a ConfigError naming the hook and the field.
 */
export function defineHooks(definition: HookSetDefinition): HookSet {
  return resolveHookSet(definition, 'hook set');
}

/** Validates a hook set from any source (`where` names the source in error messages). */
export function resolveHookSet(definition: unknown, where: string, baseDir?: string): HookSet {
  const parsed = hookSetSchema.safeParse(definition);
  if (!parsed.success) throw new ConfigError(`${where}: ${describeHookSetIssues(parsed.error, definition)}`);
  const set = parsed.data;
  const defaults = set.defaults ?? {};
  const seen = new Set<string>();
  const hooks: ResolvedHook[] = set.hooks.map((hook, index) => {
    const label = `${where}: hooks[${index}] (id "${hook.id}")`;
    if (seen.has(hook.id)) throw new ConfigError(`${label}: id is a duplicate; ids must be unique within a hook set`);
    seen.add(hook.id);
    const points = Array.isArray(hook.point) ? [...new Set(hook.point)] : [hook.point];
    const runtimes = [hook.run, hook.command, hook.http, hook.worker].filter((r) => r !== undefined).length;
    if (runtimes !== 1) {
      throw new ConfigError(`${label}: needs exactly one of run, command, http or worker (has ${runtimes})`);
    }
    if (hook.isolation !== undefined && hook.run === undefined) {
      throw new ConfigError(
        `${label}: isolation: only an in-process hook (run) has an isolation; worker hooks always run in a worker thread`,
      );
    }
    if (hook.isolation === 'worker' && /\{\s*\[native code\]\s*\}\s*$/.test(hook.run!.toString())) {
      throw new ConfigError(`${label}: isolation: "worker" needs the function's source text, and run is a native or bound function`);
    }
    const mode = hook.mode ?? defaults.mode ?? 'foreground';
    const capability = hook.capability ?? defaults.capability ?? 'observe';
    if (mode === 'background' && capability === 'guardrail') {
      throw new ConfigError(
        `${label}: capability: a background hook cannot be a guardrail (it never decides); use mode foreground or capability observe`,
      );
    }
    if (capability === 'observe' && hook.onFailure === 'deny') {
      throw new ConfigError(`${label}: onFailure: an observer cannot fail closed (it never decides); declare capability "guardrail"`);
    }
    let matcher: (toolName: string | null) => boolean;
    try {
      matcher = compileMatcher(hook.match);
    } catch (error) {
      throw new ConfigError(`${label}: match: "${hook.match}" is not a valid regular expression (${(error as Error).message})`);
    }
    if (hook.match !== undefined && hook.match.trim() !== '' && hook.match.trim() !== '*' && !points.some((p) => TOOL_POINTS.has(p))) {
      throw new ConfigError(`${label}: match: a tool matcher needs a tool point (${[...TOOL_POINTS].join(', ')})`);
    }
    return {
      id: hook.id,
      points,
      match: hook.match ?? null,
      matches: (point, toolName) => !TOOL_POINTS.has(point) || matcher(toolName),
      priority: hook.priority ?? defaults.priority ?? DEFAULT_PRIORITY,
      mode,
      capability,
      timeoutMs: hook.timeoutMs ?? defaults.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      onFailure: hook.onFailure ?? (capability === 'guardrail' ? 'deny' : 'allow'),
      enabled: hook.enabled ?? true,
      description: hook.description ?? null,
      runtime: resolveRuntime(hook, baseDir),
    };
  });
  if (set.redact) validateRedaction(set.redact, where);
  const resolved = {
    name: set.name,
    version: set.version ?? '0',
    strategy: set.strategy ?? 'deny_wins',
    backgroundConcurrency: set.backgroundConcurrency ?? DEFAULT_BACKGROUND_CONCURRENCY,
    hooks,
    ...(set.redact ? { redact: set.redact } : {}),
  };
  const canonical = canonicalJson(canonicalForm(resolved));
  return { ...resolved, canonical, fingerprint: createHash('sha256').update(canonical).digest('hex') };
}

function resolveRuntime(hook: z.output<typeof hookSchema>, baseDir: string | undefined): RuntimeSpec {
  if (hook.run)
    return hook.isolation === 'worker' ? { kind: 'in_process', fn: hook.run, isolation: 'worker' } : { kind: 'in_process', fn: hook.run };
  if (hook.command !== undefined) {
    if (typeof hook.command === 'string')
      return { kind: 'command', command: hook.command, args: null, env: {}, cwd: null, protocol: 'claude' };
    return {
      kind: 'command',
      command: hook.command.command,
      args: hook.command.args ?? null,
      env: hook.command.env ?? {},
      cwd: hook.command.cwd === undefined ? null : baseDir ? resolve(baseDir, hook.command.cwd) : hook.command.cwd,
      protocol: hook.command.protocol ?? 'claude',
    };
  }
  if (hook.http !== undefined) {
    if (typeof hook.http === 'string') return { kind: 'http', url: hook.http, headers: {}, protocol: 'claude' };
    return { kind: 'http', url: hook.http.url, headers: hook.http.headers ?? {}, protocol: hook.http.protocol ?? 'claude' };
  }
  const worker = hook.worker!;
  const module = baseDir ? resolve(baseDir, worker.module) : worker.module;
  return { kind: 'worker', module, exportName: worker.export ?? 'default' };
}

/**
 * The declarative form the fingerprint covers. Values that commonly carry credentials (http
 * header values, command environment values, URL query values) are hashed rather than kept,
 * so that a token in a hook's configuration is not written to the ledger in clear; a changed
 * value still changes the fingerprint.
 */
function canonicalForm(set: Omit<HookSet, 'fingerprint' | 'canonical'>): unknown {
  return {
    // Only named when configured, so hook sets written before redaction keep their fingerprints.
    ...(set.redact ? { redact: set.redact } : {}),
    name: set.name,
    version: set.version,
    strategy: set.strategy,
    backgroundConcurrency: set.backgroundConcurrency,
    hooks: set.hooks.map((h) => ({
      id: h.id,
      points: h.points,
      match: h.match,
      priority: h.priority,
      mode: h.mode,
      capability: h.capability,
      timeoutMs: h.timeoutMs,
      onFailure: h.onFailure,
      // Only named when off, so hook sets written before the flag keep their fingerprints.
      ...(h.enabled ? {} : { enabled: false }),
      runtime: canonicalRuntime(h.runtime),
    })),
  };
}

function canonicalRuntime(runtime: RuntimeSpec): unknown {
  switch (runtime.kind) {
    case 'in_process':
      // Isolation is only named when set, so hook sets written before it keep their fingerprints.
      return { kind: runtime.kind, source: runtime.fn.toString(), ...(runtime.isolation === 'worker' ? { isolation: 'worker' } : {}) };
    // The protocol is only named when not Claude's, so hook sets written before it keep their fingerprints.
    case 'command':
      return {
        kind: runtime.kind,
        command: runtime.command,
        args: runtime.args,
        env: hashedValues(runtime.env),
        cwd: runtime.cwd,
        ...protocolField(runtime.protocol),
      };
    case 'http':
      return {
        kind: runtime.kind,
        url: urlWithHashedQuery(runtime.url),
        headers: hashedValues(runtime.headers),
        ...protocolField(runtime.protocol),
      };
    case 'worker':
      return { kind: runtime.kind, module: runtime.module, export: runtime.exportName };
  }
}

function protocolField(protocol: WireProtocol): { protocol?: WireProtocol } {
  return protocol === 'claude' ? {} : { protocol };
}

/** The redaction rules compile (domain/redaction.ts, the same check the ledger's Redactor makes). */
function validateRedaction(redact: RedactConfig, where: string): void {
  try {
    compileRedaction(redact);
  } catch (error) {
    if (error instanceof RedactionRuleError) throw new RedactionRuleError(`${where}: ${error.message}`, { cause: error });
    throw error;
  }
}

/** JSON with object keys sorted at every level: the same value always gives the same text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      return Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return v;
  });
}

/** Names the hook (by id) an issue is about, not just its index. */
function describeHookSetIssues(error: z.ZodError, definition: unknown): string {
  const first = error.issues[0];
  if (first && first.path[0] === 'hooks' && typeof first.path[1] === 'number') {
    const hooks = (definition as { hooks?: unknown[] }).hooks;
    const hook = hooks?.[first.path[1]] as { id?: unknown } | undefined;
    const id = typeof hook?.id === 'string' && hook.id.trim() !== '' ? ` (id "${hook.id}")` : '';
    const field = first.path.slice(2).join('.') || '(hook)';
    return `hooks[${first.path[1]}]${id}: ${field}: ${issueMessage(first)}`;
  }
  return formatIssues(error);
}

const secretDigest = (value: string): string => `sha256:${createHash('sha256').update(value).digest('hex').slice(0, 16)}`;

function hashedValues<T extends Record<string, string> | null | undefined>(values: T): T {
  if (!values) return values;
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, secretDigest(v)])) as T;
}

/** `https://h/p?key=sk-…` → `https://h/p?key=sha256:…`; a URL without a query (or unparsable) is kept. */
function urlWithHashedQuery(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash === -1 ? undefined : hash);
  const hashed = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq === -1 ? pair : `${pair.slice(0, eq)}=${secretDigest(pair.slice(eq + 1))}`;
    })
    .join('&');
  return `${url.slice(0, q)}?${hashed}${hash === -1 ? '' : url.slice(hash)}`;
}
