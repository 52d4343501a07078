// docs/schemas/: one JSON Schema (draft 2020-12) per command's --json document. Every golden file's stdout
// (json-golden.test.ts writes them from the real CLI, which prints the library's objects) is valid against its
// command's schema, and the schemas are strict enough to catch a field removed or retyped. The schemas allow
// fields they do not name: within a major version fields are only added (docs/output.md).

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import type {
  BatchListEntry,
  CheckFailure,
  CheckManyResult,
  CheckResult,
  DeliverManyResult,
  DeliverResult,
  DryRunResult,
  FailedDelivery,
  MonthStatus,
  StatusResult,
} from '../src/index.js';
import type { DeliverySummary } from '../src/core/delivery/deliver.js';
import type { DoctorResult } from '../src/core/diagnostics/doctor.js';
import type { LoginResult, LogoutResult } from '../src/core/login.js';
import type { ColumnEntry } from '../src/core/preflight/columns.js';
import { ROOT } from './helpers.js';

const SCHEMAS = path.join(ROOT, 'docs', 'schemas');
const GOLDEN = path.join(ROOT, 'test', 'golden');
const COMMANDS = [
  'check',
  'deliver',
  'status',
  'list',
  'whoami',
  'register-source',
  'login',
  'logout',
  'doctor',
  'sandbox',
];

const ajv = new Ajv2020({ strict: true, allErrors: true });
const files = readdirSync(SCHEMAS).filter((name) => name.endsWith('.schema.json'));
for (const name of files) ajv.addSchema(JSON.parse(readFileSync(path.join(SCHEMAS, name), 'utf8')) as object);

function validator(command: string): ValidateFunction {
  const schema = ajv.getSchema(
    `https://raw.githubusercontent.com/batch-delivery/bds/main/docs/schemas/${command}.schema.json`,
  );
  if (!schema) throw new Error(`no schema for ${command}`);
  return schema;
}

/** The command a golden file's name starts with. */
function commandOf(golden: string): string {
  const command = COMMANDS.find((c) => golden === c || golden.startsWith(`${c}-`));
  if (!command) throw new Error(`no command for golden file ${golden}`);
  return command;
}

/** A golden file's exit code and stdout (what follows `--- stdout`, up to `--- stderr`). */
function readGolden(name: string): { exit: number; stdout: string } {
  const text = readFileSync(path.join(GOLDEN, name), 'utf8');
  const exit = Number(/^exit (\d+)/.exec(text)![1]);
  const stdout = text.split('\n--- stdout\n')[1]!.split('\n--- stderr\n')[0]!;
  return { exit, stdout };
}

function errorsOf(validate: ValidateFunction): string {
  return ajv.errorsText(validate.errors, { separator: '\n' });
}

describe('docs/schemas', () => {
  it('holds one schema per command, each draft 2020-12 and compiled by Ajv in strict mode', () => {
    expect(files.sort()).toEqual([...COMMANDS, 'error'].map((c) => `${c}.schema.json`).sort());
    for (const name of files) {
      const schema = JSON.parse(readFileSync(path.join(SCHEMAS, name), 'utf8')) as Record<string, unknown>;
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(schema.description).toBeTruthy();
    }
    for (const command of COMMANDS) expect(validator(command)).toBeTypeOf('function');
  });

  const goldens = readdirSync(GOLDEN).filter((name) => name.endsWith('.txt') && !name.endsWith('-text.txt'));
  it.each(goldens)('%s is valid against its command’s schema', (name) => {
    const { exit, stdout } = readGolden(name);
    const document = JSON.parse(stdout) as Record<string, unknown>;
    const validate = validator(commandOf(name.replace(/\.txt$/, '')));
    expect(validate(document), errorsOf(validate)).toBe(true);
    // The document's own exit code, where it has one, is the command's.
    const error = document.error as { exit_code?: number } | undefined;
    const own = typeof document.exit_code === 'number' ? document.exit_code : error?.exit_code;
    if (own !== undefined && exit !== 130) expect(own).toBe(exit);
  });

  it('catches a field removed, a field retyped and a state misspelt', () => {
    const check = JSON.parse(readGolden('check-one.txt').stdout) as Record<string, unknown>;
    const { sha256: _removed, ...withoutSha } = check;
    expect(validator('check')(withoutSha)).toBe(false);
    expect(validator('check')({ ...check, record_count: '3' })).toBe(false);
    const status = JSON.parse(readGolden('status.txt').stdout) as { months: Array<Record<string, unknown>> };
    status.months[0]!.state = 'lost';
    expect(validator('status')(status)).toBe(false);
    // A field added is fine: that is how the documents grow.
    expect(validator('check')({ ...check, added_later: 1 })).toBe(true);
  });
});

/**
 * Every field of a library type, spelt out: the compiler refuses a field missing here or one the type does not
 * have, and the test compares the list with the schema's properties. So the types and the schemas name the same
 * fields.
 */
type Fields<T> = Record<keyof KnownKeys<T>, true>;
/** T without its index signature (the API's objects keep fields bds does not know). */
type KnownKeys<T> = { [K in keyof T as string extends K ? never : K]: T[K] };

/** What every month's delivery result names. */
const SUMMARY = {
  source_id: true,
  product: true,
  period: true,
  record_count: true,
  bytes: true,
  sha256: true,
  schema_changes: true,
} as const satisfies Fields<DeliverySummary>;

const TYPES: Array<[string, string, Record<string, true>]> = [
  [
    'check',
    'result',
    {
      ok: true,
      dir: true,
      data_file: true,
      product: true,
      period: true,
      record_count: true,
      bytes: true,
      sha256: true,
      report: true,
      columns: true,
      roles: true,
      warnings: true,
      schema_changes: true,
    } satisfies Fields<CheckResult>,
  ],
  ['check', 'failure', { ok: true, dir: true, error: true } satisfies Fields<CheckFailure>],
  ['check', 'many', { checks: true } satisfies Fields<CheckManyResult>],
  [
    'check',
    'column',
    { object: true, name: true, role: true, kind: true, transform: true } satisfies Fields<ColumnEntry>,
  ],
  // `error`: the CLI's, for a --wait that a signal stopped (deliver-result.ts).
  [
    'deliver',
    'delivered',
    { ...SUMMARY, batch: true, skipped: true, resumed: true, review: true, error: true } satisfies Fields<
      DeliverResult & { error: unknown }
    >,
  ],
  [
    'deliver',
    'dry_run',
    { ...SUMMARY, dry_run: true, existing_batch: true, would: true } satisfies Fields<DryRunResult>,
  ],
  ['deliver', 'failed', { ...SUMMARY, batch: true, skipped: true, resumed: true } satisfies Fields<FailedDelivery>],
  ['deliver', 'many', { deliveries: true, exit_code: true, review: true } satisfies Fields<DeliverManyResult>],
  [
    'status',
    'result',
    {
      source_id: true,
      since: true,
      until: true,
      months: true,
      counts: true,
      exit_code: true,
    } satisfies Fields<StatusResult>,
  ],
  [
    'status',
    'month',
    {
      period: true,
      product: true,
      state: true,
      batch_id: true,
      record_count: true,
      created_at: true,
    } satisfies Fields<MonthStatus>,
  ],
  [
    'list',
    'batch',
    {
      id: true,
      period: true,
      product: true,
      record_count: true,
      status: true,
      created_at: true,
    } satisfies Fields<BatchListEntry>,
  ],
];

describe('the library’s result types', () => {
  it.each(TYPES)('%s.schema.json#/$defs/%s names the fields of its type', (command, def, fields) => {
    const schema = JSON.parse(readFileSync(path.join(SCHEMAS, `${command}.schema.json`), 'utf8')) as {
      $defs: Record<string, { properties: Record<string, unknown> }>;
    };
    expect(Object.keys(schema.$defs[def]!.properties).sort()).toEqual(Object.keys(fields).sort());
  });

  it('doctor, login and logout name the fields of their types', () => {
    const properties = (command: string) => {
      const schema = JSON.parse(readFileSync(path.join(SCHEMAS, `${command}.schema.json`), 'utf8')) as {
        anyOf: Array<{ properties?: Record<string, unknown> }>;
      };
      return Object.keys(schema.anyOf[0]!.properties!).sort();
    };
    const doctor: Fields<DoctorResult> = { ok: true, exit_code: true, checks: true };
    const logout: Fields<LogoutResult> = {
      configFile: true,
      profile: true,
      removed: true,
      remaining: true,
      remainingIn: true,
    };
    const login: Fields<LoginResult> = {
      organization: true,
      key: true,
      baseUrl: true,
      configFile: true,
      profile: true,
      madeDefault: true,
      overriddenBy: true,
      overriddenIn: true,
      defaultProfile: true,
    };
    expect(properties('doctor')).toEqual(Object.keys(doctor).sort());
    expect(properties('logout')).toEqual(Object.keys(logout).sort());
    expect(properties('login')).toEqual(Object.keys(login).sort());
  });
});
