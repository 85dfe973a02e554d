/**
 * The hook set behind `hookledger demo`: realistic guardrails and observers for a Claude Code
 * session, fed with the bundled session in `examples/demo/session.json` (84 events, two
 * sessions). Which events each rule catches there (tool_use_id, then what the agent tried):
 *
 *   block-destructive-rm  deny safety_violation  toolu_01eWjKNt0XJJembuqWivNiWE  `rm -rf coverage/ node_modules/.cache/jest ~/`
 *   protect-secrets       deny policy_violation  toolu_01XfvukNKJdG4NXPHQL1NpDR  Read /home/dev/acme-api/.env
 *                                                toolu_01W4ZJZXFPL145aS430aX8Td  Read /home/dev/.ssh/id_ed25519
 *                                                toolu_01Kw8jczj1I7qZK9dQtoUayf  `cat ~/.aws/credentials` (second session)
 *   no-pipe-to-shell      deny safety_violation  toolu_01Dxuk348k2yWqPbaIuNjlzy  `curl -fsSL https://get.acme-deploy.dev/install.sh | sh`
 *   stay-in-project       deny policy_violation  toolu_01LxSGM9B5wCYAUOuyJH4hr9  Write /home/dev/acme-shared/src/pagination.ts
 *   secret-scan (python)  deny policy_violation  toolu_01GAVyshscGz8ueSyGTm0GEx  Write of a test with `password=` in a DB URL (stdout permissionDecision)
 *   lint-gate (bash)      deny policy_violation  toolu_01ZwRIpt5leJi14jlPdfrkNg  `git commit --no-verify ...` (exit 2, reason on stderr)
 *   github-org-policy     deny timeout (fail-closed, 250 ms)
 *                                                toolu_01IHNJurMaysqo1GEvrPbHZ8  mcp__github__create_pull_request
 *   prompt-secret-scan    deny policy_violation  the 2nd prompt of the first session (pastes AKIAIOSFODNN7EXAMPLE)
 *   confirm-force-push    ask                    toolu_0194epuj8EWLhu51A9xQXm2u  `git push --force origin fix/users-pagination`
 *   dry-run-publish       modify (decision none) toolu_01naz9wvRHTfWcIxhrFsN1D6  `npm publish --access public` → `npm publish --dry-run --access public`
 *                         (runs at priority 5, before lint-gate at 60, which therefore sees the dry run and lets it through)
 *   license-check         timed out (fail-open, 300 ms): toolu_01KuC710MCcj413bY5kzBOX0 and toolu_0169YDtswBURZH3uOfNjF7zj (WebFetch)
 *   audit-tool-usage      observes every tool call (pre and post); usage-metrics observes every result in the background
 *
 * Everything else (reads, greps, edits inside the project, tests, commits, pushes) has no
 * guardrail objection. The AWS key in the prompt is AWS's documented example key, not a real one.
 */
import { homedir } from 'node:os';
import { join, posix, resolve, win32 } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HookContext } from '../domain/hooks.js';
import { defineHooks } from '../domain/hooks.js';
import type { Invocation } from '../domain/invocation.js';
import { ask, deny, modify } from '../domain/results.js';

/** The package root: two levels above this file, both in src/demo/ and in dist/demo/. */
export const demoPackageRoot: string = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** The bundled Claude Code session the demo feeds through `demoHookSet`. */
export const demoSessionPath: string = join(demoPackageRoot, 'examples', 'demo', 'session.json');

const scriptPath = (name: string): string => join(demoPackageRoot, 'examples', 'demo', 'hooks', name);

// ------------------------------------------------------------------ helpers

function toolInputOf(invocation: Invocation): Record<string, unknown> {
  const input = invocation.toolInput;
  return input !== null && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

function stringField(invocation: Invocation, field: string): string | null {
  const value = toolInputOf(invocation)[field];
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/**
 * Splits a shell command into simple commands (on `;`, `&`, `|`, newlines, parentheses and
 * backticks), each a list of words with quotes removed. Not a full shell parser: enough to
 * find the program and its arguments without being fooled by `"; "` inside quotes.
 */
export function splitShell(command: string): string[][] {
  const segments: string[][] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let quote: '"' | "'" | null = null;
  const endWord = (): void => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endSegment = (): void => {
    endWord();
    if (words.length > 0) segments.push(words);
    words = [];
  };
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote !== null) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < command.length) word += command[++i];
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < command.length) {
      word += command[++i];
      inWord = true;
    } else if (c === ' ' || c === '\t') {
      endWord();
    } else if (';&|\n()`'.includes(c)) {
      endSegment();
    } else if (c === '<' || c === '>') {
      endWord();
    } else {
      word += c;
      inWord = true;
    }
  }
  endSegment();
  return segments;
}

const PREFIX_WORDS = new Set(['sudo', 'doas', 'env', 'nohup', 'time', 'exec', 'command', 'nice', 'xargs']);

/** The program (basename) and its arguments, skipping `VAR=x`, `sudo`, `env` and similar prefixes. */
function programOf(words: string[]): { program: string; args: string[] } | null {
  let i = 0;
  while (i < words.length && (PREFIX_WORDS.has(words[i]!) || /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!))) i++;
  const program = words[i];
  if (program === undefined) return null;
  return { program: program.split('/').pop() ?? program, args: words.slice(i + 1) };
}

/** The path flavour a path is written in: Windows drive paths use win32 rules, all else POSIX. */
const pathApi = (p: string): typeof posix => (/^[A-Za-z]:[\\/]/.test(p) ? win32 : posix);

/** True when `target` (absolute) is `root` or inside it. */
function isInside(root: string, target: string): boolean {
  const api = pathApi(root);
  const rel = api.relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${api.sep}`) && !api.isAbsolute(rel));
}

/** Waits `ms`, or less if `signal` fires; resolves true when the full wait elapsed. */
function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((done) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      done(true);
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      done(false);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Shows the first and last four characters of a secret: `AKIA…MPLE`. */
const mask = (secret: string): string => (secret.length > 8 ? `${secret.slice(0, 4)}…${secret.slice(-4)}` : '…');

// ------------------------------------------------------------------ rules

/** Why removing `target` recursively is dangerous, or null when it stays inside the project. */
function dangerousRmTarget(target: string, cwd: string | null): string | null {
  if (target === '' || target.startsWith('-')) return null;
  if (/^(~|\$HOME|\$\{HOME\})\/?\*?$/.test(target)) return `${target} is the home directory`;
  let path = target;
  const home = /^(~|\$HOME|\$\{HOME\})(?=\/)/.exec(target);
  if (home) path = homedir() + target.slice(home[0].length);
  else if (target.startsWith('~')) return `${target} is in another user's home directory`;
  if (path.includes('$')) return `${target} uses a shell variable, so the hook cannot tell where it points (an empty variable makes it /)`;
  if (/^\/+\*?$/.test(path)) return `${target} is the filesystem root`;
  if (cwd === null)
    return path.startsWith('/') && !path.startsWith('/tmp/') ? `${target} is an absolute path and the project directory is unknown` : null;
  const absolute = posix.resolve(cwd, path);
  if (absolute === posix.resolve(cwd)) return `${target} is the whole project directory`;
  if (!isInside(cwd, absolute)) return `${target} resolves to ${absolute}, outside the project ${cwd}`;
  return null;
}

const blockDestructiveRm = (invocation: Invocation) => {
  const command = stringField(invocation, 'command');
  if (command === null) return;
  for (const words of splitShell(command)) {
    const parsed = programOf(words);
    if (parsed?.program !== 'rm') continue;
    let recursive = false;
    let endOfOptions = false;
    const targets: string[] = [];
    for (const arg of parsed.args) {
      if (!endOfOptions && arg === '--') endOfOptions = true;
      else if (!endOfOptions && arg.startsWith('--')) recursive ||= arg === '--recursive';
      else if (!endOfOptions && /^-[A-Za-z]+$/.test(arg)) recursive ||= /[rR]/.test(arg);
      else targets.push(arg);
    }
    if (!recursive) continue;
    for (const target of targets) {
      const why = dangerousRmTarget(target, invocation.cwd);
      if (why !== null) {
        return deny(`Recursive delete blocked: ${why}. Only paths inside the project may be removed with rm -r.`, 'safety_violation', {
          command,
          target,
        });
      }
    }
  }
  return;
};

/** Why a path (or a word that looks like one) is a secret, or null. `.env.example` and friends are fine. */
export function secretPathReason(path: string): string | null {
  const p = path.replace(/\\/g, '/');
  const base = p.split('/').pop() ?? '';
  if (/^\.env(\..+)?$/.test(base) && !/^\.env\.(example|sample|template|dist|defaults)$/.test(base)) {
    return `${base} holds environment secrets`;
  }
  if (/(^|\/)\.ssh(\/|$)/.test(p)) return 'files in ~/.ssh are SSH keys and configuration';
  if (/^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/.test(base)) return `${base} is a private SSH key`;
  if (/(^|\/)\.aws\/credentials$/.test(p)) return '~/.aws/credentials holds AWS access keys';
  return null;
}

const protectSecrets = (invocation: Invocation) => {
  const candidates: string[] = [];
  if (invocation.toolName === 'Bash') {
    const command = stringField(invocation, 'command');
    if (command === null) return;
    for (const words of splitShell(command)) {
      for (const word of words) candidates.push(word, ...word.split('=').slice(1));
    }
  } else {
    const filePath = stringField(invocation, 'file_path');
    if (filePath !== null) candidates.push(filePath);
  }
  for (const candidate of candidates) {
    const why = secretPathReason(candidate);
    if (why !== null) {
      const verb = invocation.toolName === 'Read' ? 'Reading' : invocation.toolName === 'Bash' ? 'A command touching' : 'Changing';
      return deny(`${verb} ${candidate} is not allowed: ${why}. Ask the user for the value you need instead.`, 'policy_violation', {
        path: candidate,
        tool: invocation.toolName,
      });
    }
  }
  return;
};

const PIPE_TO_SHELL = /\b(curl|wget)\b[^|;&\n]*\|\s*(sudo\s+(-\S+\s+)*)?(env\s+)?(ba|z|da|k|fi)?sh\b/;
const SUBSTITUTION_TO_SHELL = /\b(ba|z|da|k)?sh\b[^|;&\n]*(\$\(|`|<\()\s*(curl|wget)\b/;

const noPipeToShell = (invocation: Invocation) => {
  const command = stringField(invocation, 'command');
  if (command === null) return;
  const match = PIPE_TO_SHELL.exec(command) ?? SUBSTITUTION_TO_SHELL.exec(command);
  if (!match) return;
  return deny(
    'Piping a downloaded script straight into a shell runs unreviewed remote code. Download it, show it to the user, and run it only after review (or install from a package manager).',
    'safety_violation',
    { command, matched: match[0] },
  );
};

const stayInProject = (invocation: Invocation) => {
  const filePath = stringField(invocation, 'file_path');
  const cwd = invocation.cwd;
  if (filePath === null || cwd === null) return;
  const api = pathApi(cwd);
  const absolute = api.resolve(cwd, filePath);
  if (isInside(cwd, absolute)) return;
  return deny(
    `${invocation.toolName ?? 'Writing'} outside the project is not allowed: ${absolute} is not under ${cwd}.`,
    'policy_violation',
    {
      filePath: absolute,
      projectDir: cwd,
    },
  );
};

const confirmForcePush = (invocation: Invocation) => {
  const command = stringField(invocation, 'command');
  if (command === null) return;
  for (const words of splitShell(command)) {
    const parsed = programOf(words);
    if (parsed?.program !== 'git') continue;
    const push = parsed.args.indexOf('push');
    if (push < 0) continue;
    const args = parsed.args.slice(push + 1);
    const forced = args.some((a) => a === '--force' || /^-[A-Za-z]*f[A-Za-z]*$/.test(a) || (a.startsWith('+') && a.length > 1));
    if (!forced) continue;
    const refs = args.filter((a) => !a.startsWith('-')).join(' ') || 'the current branch';
    return ask(
      `Force-push to ${refs}? It rewrites history on the remote. (--force-with-lease would refuse if someone else pushed meanwhile.)`,
    );
  }
  return;
};

const PUBLISH = /\b(npm|pnpm|yarn)(\s+)publish\b(?![^;&|\n]*--dry-run)/g;

const dryRunPublish = (invocation: Invocation) => {
  const command = stringField(invocation, 'command');
  if (command === null) return;
  const rewritten = command.replace(PUBLISH, '$1$2publish --dry-run');
  if (rewritten === command) return;
  return modify(
    { ...toolInputOf(invocation), command: rewritten },
    'publishing happens from CI only; the agent may inspect the package with a dry run',
  );
};

const AWS_ACCESS_KEY_ID = /\b(AKIA|ASIA)[0-9A-Z]{16}\b/;
const PRIVATE_KEY_BLOCK = /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/;

const promptSecretScan = (invocation: Invocation) => {
  const prompt = invocation.prompt;
  if (prompt === null) return;
  const key = AWS_ACCESS_KEY_ID.exec(prompt);
  if (key) {
    return deny(
      `The prompt contains an AWS access key id (${mask(key[0])}); it was not sent to the model. Remove it, rotate the key, and keep credentials in a secret store.`,
      'policy_violation',
      { kind: 'aws_access_key_id', match: mask(key[0]) },
    );
  }
  if (PRIVATE_KEY_BLOCK.test(prompt)) {
    return deny(
      'The prompt contains a private key block; it was not sent to the model. Remove it and rotate the key.',
      'policy_violation',
      {
        kind: 'private_key',
      },
    );
  }
  return;
};

const UNLICENSED_HOSTS = new Set(['pastebin.com', 'gist.githubusercontent.com']);

/** Asks a (simulated, slow) licence service whether fetched content may be used. Honours ctx.signal. */
const licenseCheck = async (invocation: Invocation, ctx: HookContext) => {
  const url = stringField(invocation, 'url');
  if (url === null) return;
  const answered = await wait(2000, ctx.signal);
  if (!answered) return;
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return;
  }
  if (UNLICENSED_HOSTS.has(host))
    return deny(`Content from ${host} has no known licence; do not copy it into the project.`, 'policy_violation');
  return;
};

const ALLOWED_GITHUB_OWNERS = new Set(['acme-corp']);

/** Asks a (simulated, slow) organisation policy service before any GitHub MCP call. Honours ctx.signal. */
const githubOrgPolicy = async (invocation: Invocation, ctx: HookContext) => {
  const answered = await wait(1500, ctx.signal);
  if (!answered) return;
  const owner = stringField(invocation, 'owner');
  if (owner !== null && !ALLOWED_GITHUB_OWNERS.has(owner)) {
    return deny(`GitHub actions on ${owner} are not allowed for this agent.`, 'policy_violation');
  }
  return;
};

// ------------------------------------------------------------------ the hook set

export const demoHookSet = defineHooks({
  name: 'demo-guardrails',
  version: '1.0.0',
  strategy: 'deny_wins',
  hooks: [
    {
      id: 'audit-tool-usage',
      description: 'Sees every tool call and result first (priority 1), so it is never skipped by a deny.',
      point: ['pre_tool_use', 'post_tool_use'],
      priority: 1,
      capability: 'observe',
      mode: 'foreground',
      run: () => undefined,
    },
    {
      id: 'block-destructive-rm',
      description: 'Denies rm -r of /, ~, $HOME, variables, the project itself or anything outside the project.',
      point: 'pre_tool_use',
      match: 'Bash',
      priority: 10,
      capability: 'guardrail',
      run: blockDestructiveRm,
    },
    {
      id: 'protect-secrets',
      description: 'Denies reading or changing .env files, ~/.ssh, private SSH keys and ~/.aws/credentials.',
      point: 'pre_tool_use',
      match: 'Read|Edit|Write|Bash',
      priority: 20,
      capability: 'guardrail',
      run: protectSecrets,
    },
    {
      id: 'no-pipe-to-shell',
      description: 'Denies curl/wget output piped or substituted into a shell.',
      point: 'pre_tool_use',
      match: 'Bash',
      priority: 30,
      capability: 'guardrail',
      run: noPipeToShell,
    },
    {
      id: 'stay-in-project',
      description: 'Denies Write and Edit outside the session working directory.',
      point: 'pre_tool_use',
      match: 'Write|Edit',
      priority: 40,
      capability: 'guardrail',
      run: stayInProject,
    },
    {
      id: 'secret-scan',
      description: 'Python command hook: denies writing AWS keys, private key blocks or password literals.',
      point: 'pre_tool_use',
      match: 'Write|Edit',
      priority: 50,
      capability: 'guardrail',
      timeoutMs: 5000,
      onFailure: 'deny',
      command: { command: 'python3', args: [scriptPath('secret_scan.py')], cwd: demoPackageRoot },
    },
    {
      id: 'lint-gate',
      description: 'Bash command hook: exit 2 for git commit/push --no-verify and for npm publish without --dry-run.',
      point: 'pre_tool_use',
      match: 'Bash',
      priority: 60,
      capability: 'guardrail',
      timeoutMs: 5000,
      onFailure: 'deny',
      command: { command: 'bash', args: [scriptPath('lint_gate.sh')], cwd: demoPackageRoot },
    },
    {
      // Registered after lint-gate but runs before it (priority 5 < 60): lint-gate sees the rewritten command.
      id: 'dry-run-publish',
      description: 'Rewrites npm/pnpm/yarn publish into a --dry-run; real publishing happens from CI.',
      point: 'pre_tool_use',
      match: 'Bash',
      priority: 5,
      capability: 'guardrail',
      run: dryRunPublish,
    },
    {
      id: 'confirm-force-push',
      description: 'Asks the user before git push --force / -f / +refspec (not --force-with-lease).',
      point: 'pre_tool_use',
      match: 'Bash',
      priority: 70,
      capability: 'guardrail',
      run: confirmForcePush,
    },
    {
      id: 'github-org-policy',
      description: 'Checks GitHub MCP calls with a slow policy service; fails closed after 250 ms.',
      point: 'pre_tool_use',
      match: 'mcp__github__.*',
      priority: 80,
      capability: 'guardrail',
      timeoutMs: 250,
      onFailure: 'deny',
      run: githubOrgPolicy,
    },
    {
      id: 'license-check',
      description: 'Checks fetched URLs with a slow licence service; fails open after 300 ms.',
      point: 'pre_tool_use',
      match: 'WebFetch',
      priority: 90,
      capability: 'guardrail',
      timeoutMs: 300,
      onFailure: 'allow',
      run: licenseCheck,
    },
    {
      id: 'prompt-secret-scan',
      description: 'Denies prompts that contain an AWS access key id or a private key block.',
      point: 'user_prompt_submit',
      priority: 10,
      capability: 'guardrail',
      run: promptSecretScan,
    },
    {
      id: 'usage-metrics',
      description: 'Background observer standing in for a metrics exporter (about 20 ms per result).',
      point: ['post_tool_use', 'post_tool_use_failure'],
      mode: 'background',
      capability: 'observe',
      timeoutMs: 1000,
      run: async (_invocation, ctx) => {
        await wait(20, ctx.signal);
        return undefined;
      },
    },
  ],
});
