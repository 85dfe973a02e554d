import { describe, expect, it } from 'vitest';
import { defineHooks, resolveHookSet } from '../../src/domain/hooks.js';
import { deny, modify } from '../../src/domain/results.js';
import { explain } from '../../src/ledger/queries/explain.js';
import { redact, Redactor } from '../../src/ledger/redact.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createRunner } from '../../src/runner/runner.js';
import { setup, tempLedger, waitFor } from '../helpers.js';

const AWS_ID = 'AKIAIOSFODNN7EXAMPLE';
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const PEM = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc==\n-----END RSA PRIVATE KEY-----';

describe('redact (pure)', () => {
  it.each([
    ['aws_access_key', `aws s3 ls --key ${AWS_ID}`, `aws s3 ls --key [REDACTED:aws_access_key]`],
    ['aws_secret_key', `export AWS_SECRET_ACCESS_KEY=${AWS_SECRET}`, 'export AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_key]'],
    ['gcp_api_key', 'key=AIzaSyA-1234567890abcdefghijklmnopqrstu x', 'key=[REDACTED:gcp_api_key] x'],
    [
      'azure_storage_key',
      `DefaultEndpointsProtocol=https;AccountName=a;AccountKey=${'A'.repeat(86)}==;`,
      'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=[REDACTED:azure_storage_key];',
    ],
    [
      'bearer_token',
      'curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig" https://x',
      'curl -H "Authorization: Bearer [REDACTED:bearer_token]" https://x',
    ],
    ['private_key', `key:\n${PEM}\ndone`, 'key:\n[REDACTED:private_key]\ndone'],
    [
      'url_password',
      'psql postgres://admin:hunter2@db.internal:5432/app',
      'psql postgres://admin:[REDACTED:url_password]@db.internal:5432/app',
    ],
    ['password_assignment', 'mysql --password=s3cr3t -u root', 'mysql --password=[REDACTED:password_assignment] -u root'],
    ['password_assignment', 'API_KEY=abc123def456 npm start', 'API_KEY=[REDACTED:password_assignment] npm start'],
    [
      'github_token',
      'git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x',
      'git clone https://[REDACTED:github_token]@github.com/x',
    ],
    [
      'azure_sas_signature',
      'az copy https://a.blob.core.windows.net/c?sv=2022&sig=AbCdEf0123456789%2BxyZ== .',
      'az copy https://a.blob.core.windows.net/c?sv=2022&sig=[REDACTED:azure_sas_signature] .',
    ],
    ['slack_token', 'SLACK=xoxb-1234567890-abcdefghij ./notify', 'SLACK=[REDACTED:slack_token] ./notify'],
    ['llm_api_key', 'ask --with sk-ant-abcdefghijklmnopqrstuvwxyz012345', 'ask --with [REDACTED:llm_api_key]'],
    ['stripe_key', 'charge rk_live_abcdefghijklmnopqrstuvwx now', 'charge [REDACTED:stripe_key] now'],
    ['basic_auth', 'curl -H "authorization: basic dXNlcjpwYXNzd29yZA==" x', 'curl -H "authorization: basic [REDACTED:basic_auth]" x'],
  ])('built-in rule %s', (_name, input, expected) => {
    const result = redact({ command: input });
    expect(result.value).toEqual({ command: expected });
    expect(result.paths).toEqual(['command']);
  });

  it('leaves ordinary text alone and does not copy what it did not change', () => {
    const value = { command: 'ls -la && git status', n: 3, tokens: 120, max_tokens: 5, nested: [{ a: 'Bearer' }] };
    const result = redact(value);
    expect(result.value).toBe(value);
    expect(result.paths).toEqual([]);
  });

  it('replaces string values under secret-looking keys, and never mutates the input', () => {
    const value = { env: { API_TOKEN: 'short', HOME: '/home/dev', password: 'pw' }, headers: { Authorization: 'x' } };
    const copy = structuredClone(value);
    const result = redact(value);
    expect(result.value).toEqual({
      env: { API_TOKEN: '[REDACTED:secret_field]', HOME: '/home/dev', password: '[REDACTED:secret_field]' },
      headers: { Authorization: '[REDACTED:secret_field]' },
    });
    expect(result.paths).toEqual(['env.API_TOKEN', 'env.password', 'headers.Authorization']);
    expect(value).toEqual(copy);
  });

  it('with the built-ins on, a configured pattern still applies to strings no built-in matches', () => {
    const redactor = new Redactor({ patterns: [{ name: 'ticket', regex: '(?<pre>TICKET-)\\d+' }] });
    const result = redactor.redact({ a: 'see TICKET-42', b: `both TICKET-7 and ${AWS_ID}`, c: 'nothing here at all' });
    expect(result.value).toEqual({
      a: 'see TICKET-[REDACTED:ticket]',
      b: 'both TICKET-[REDACTED:ticket] and [REDACTED:aws_access_key]',
      c: 'nothing here at all',
    });
    expect(result.paths).toEqual(['a', 'b']);
  });

  it('configured paths (with * and **) and patterns (with kept pre/post groups)', () => {
    const redactor = new Redactor({
      defaults: false,
      paths: ['toolInput.env.DB_URL', 'toolInput.items.*.ssn', '**.pin'],
      patterns: [{ name: 'ticket', regex: '(?<pre>TICKET-)\\d+' }],
    });
    const result = redactor.redact({
      toolInput: { env: { DB_URL: 'x', OTHER: 'TICKET-42' }, items: [{ ssn: '1' }, { ssn: '2', name: 'a' }], deep: { er: { pin: 1234 } } },
    });
    expect(result.value).toEqual({
      toolInput: {
        env: { DB_URL: '[REDACTED:path]', OTHER: 'TICKET-[REDACTED:ticket]' },
        items: [{ ssn: '[REDACTED:path]' }, { ssn: '[REDACTED:path]', name: 'a' }],
        deep: { er: { pin: '[REDACTED:path]' } },
      },
    });
    expect(result.paths.sort()).toEqual([
      'toolInput.deep.er.pin',
      'toolInput.env.DB_URL',
      'toolInput.env.OTHER',
      'toolInput.items.0.ssn',
      'toolInput.items.1.ssn',
    ]);
  });

  it('defaults: false turns the built-in rules off', () => {
    expect(redact({ k: AWS_ID, password: 'x' }, { defaults: false }).paths).toEqual([]);
  });

  it('a cyclic value is left for the ledger to store as unserializable; a very deep one is cut', () => {
    const cyclic: Record<string, unknown> = { a: AWS_ID };
    cyclic.self = cyclic;
    const result = redact(cyclic);
    expect((result.value as Record<string, unknown>).a).toBe('[REDACTED:aws_access_key]');
    let deep: unknown = 'leaf';
    for (let i = 0; i < 500; i++) deep = { d: deep };
    expect(redact(deep).paths).toHaveLength(1);
  });

  it('an invalid configured pattern is a ConfigError naming it', () => {
    expect(() => resolveHookSet({ name: 'x', hooks: [], redact: { patterns: [{ name: 'bad', regex: '(' }] } }, 'cfg.json')).toThrow(
      /cfg.json: redact.patterns\[0\] \("bad"\): regex is not a valid/,
    );
    expect(() => resolveHookSet({ name: 'x', hooks: [], redact: { patterns: [{ name: 'empty', regex: 'a*' }] } }, 'cfg.json')).toThrow(
      /matches the empty string/,
    );
  });

  it('the redaction rules are part of the fingerprint', () => {
    const plain = defineHooks({ name: 'x', hooks: [] });
    const withRules = defineHooks({ name: 'x', hooks: [], redact: { paths: ['toolInput.secret'] } });
    expect(withRules.fingerprint).not.toBe(plain.fingerprint);
    expect(withRules.canonical).toContain('toolInput.secret');
  });
});

describe('redaction in the write path', () => {
  it('stores secrets redacted everywhere while hooks see the original', async () => {
    const seen: unknown[] = [];
    const { runner, ledger } = setup(
      [
        { id: 'look', point: 'pre_tool_use', priority: 1, run: (inv) => void seen.push(structuredClone(inv.toolInput)) },
        {
          id: 'rewrite',
          point: 'pre_tool_use',
          priority: 2,
          capability: 'guardrail',
          run: (inv) => modify({ ...(inv.toolInput as object), command: `${(inv.toolInput as { command: string }).command} --verbose` }),
        },
        {
          id: 'block',
          point: 'pre_tool_use',
          priority: 3,
          capability: 'guardrail',
          run: () => deny(`refusing key ${AWS_ID}`, 'policy_violation', { found: AWS_ID, header: 'Bearer abcdefghijklmnop' }),
        },
      ],
      { redact: { paths: ['toolInput.env.DB_URL'] } },
    );
    const toolInput = { command: `aws configure set aws_access_key_id ${AWS_ID}`, env: { DB_URL: 'postgres://u:p@h/db', HOME: '/h' } };
    const report = await runner.run({ point: 'pre_tool_use', toolName: 'Bash', toolInput, raw: { tool_input: toolInput } });
    expect(seen).toEqual([toolInput]);
    expect(report.outcomes[2]!.message).toContain(AWS_ID); // the caller gets the real report

    const row = ledger.sqlite.prepare('SELECT * FROM invocations WHERE id = ?').get(report.invocationId) as Record<string, string>;
    const outcomes = ledger.sqlite.prepare('SELECT * FROM outcomes WHERE invocation_id = ?').all(report.invocationId) as Record<
      string,
      string
    >[];
    const everything = JSON.stringify([row, outcomes]);
    expect(everything).not.toContain(AWS_ID);
    expect(everything).not.toContain('postgres://u:p@h');
    expect(everything).not.toContain('abcdefghijklmnop');
    expect(JSON.parse(row.input_json!)).toEqual({
      command: 'aws configure set aws_access_key_id [REDACTED:aws_access_key]',
      env: { DB_URL: '[REDACTED:path]', HOME: '/h' },
    });
    expect(JSON.parse(row.modified_input_json!)).toMatchObject({
      command: 'aws configure set aws_access_key_id [REDACTED:aws_access_key] --verbose',
    });

    const e = explain(ledger, report.invocationId);
    expect(e.redactions).toEqual(
      expect.arrayContaining([
        'toolInput.command',
        'toolInput.env.DB_URL',
        'raw.tool_input.command',
        'modifiedInput.command',
        'modifiedInput.env.DB_URL',
        'message',
        'outcomes.rewrite.modifiedInput.command',
        'outcomes.block.message',
        'outcomes.block.payload.found',
        'outcomes.block.payload.header',
      ]),
    );
    expect(e.decisive?.payload).toEqual({ found: '[REDACTED:aws_access_key]', header: 'Bearer [REDACTED:bearer_token]' });
    expect(verifyLedger(ledger).ok).toBe(true);
  });

  it('a background outcome is redacted when it completes, with its own list of paths', async () => {
    const { runner, ledger } = setup([
      { id: 'bg', point: 'stop', mode: 'background', run: () => ({ additionalContext: `token=${AWS_SECRET}` }) },
    ]);
    const report = await runner.run({ point: 'stop' });
    await waitFor(() => runner.backgroundPending === 0);
    const row = ledger.sqlite
      .prepare('SELECT additional_context, redactions_json FROM outcomes WHERE invocation_id = ?')
      .get(report.invocationId);
    expect(row).toEqual({ additional_context: 'token=[REDACTED:password_assignment]', redactions_json: '["additionalContext"]' });
    expect(verifyLedger(ledger).ok).toBe(true);
  });

  it('an invocation with nothing secret records no redactions', async () => {
    const { runner, ledger } = setup([{ id: 'x', point: 'pre_tool_use', run: () => undefined }]);
    const report = await runner.run({ point: 'pre_tool_use', toolName: 'Bash', toolInput: { command: 'ls' } });
    expect(explain(ledger, report.invocationId).redactions).toEqual([]);
    expect(ledger.sqlite.prepare('SELECT redactions_json FROM invocations').pluck().get()).toBeNull();
  });
});

describe('the stored hook set definition', () => {
  it('holds no command env value or URL query value in clear, and still verifies', async () => {
    const { ledger } = tempLedger();
    const hookSet = resolveHookSet(
      {
        name: 'with-secrets',
        hooks: [
          {
            id: 'gh',
            point: 'pre_tool_use',
            capability: 'guardrail',
            command: { command: 'check.sh', env: { GITHUB_TOKEN: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789AB', MODE: 'strict' } },
          },
          {
            id: 'remote',
            point: 'pre_tool_use',
            capability: 'guardrail',
            http: 'https://hooks.example.com/check?api_key=sk-proj-abcdefghijklmnopqrstuvwxyz&team=a',
          },
        ],
      },
      'cfg.json',
    );
    createRunner({ hookSet, ledger });
    const definition = ledger.sqlite.prepare('SELECT definition_json FROM hook_sets').pluck().get() as string;
    expect(definition).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz');
    expect(definition).not.toContain('sk-proj-abcdefghijklmnopqrstuvwxyz');
    expect(definition).not.toContain('strict');
    expect(definition).toContain('https://hooks.example.com/check?api_key=sha256:');
    expect(verifyLedger(ledger).ok).toBe(true);
  });
});
