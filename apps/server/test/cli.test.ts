/**
 * `voxkey` command line, run in-process through `main(argv, io)` against a real database of the
 * dialect under test (a temporary SQLite file, or a fresh PostgreSQL database).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildProgram, serverVersion } from '../src/cli/program.js';
import type { CliIo } from '../src/cli/output.js';
import { main } from '../src/main.js';
import { TEST_DIALECT } from './support/database.js';
import { createPostgresDatabase } from './support/postgres.js';
import { BIN } from './support/server-process.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe(`voxkey CLI (${TEST_DIALECT})`, () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let dropDatabase: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'voxkey-cli-'));
    let url = `sqlite:${path.join(dir, 'voxkey.db')}`;
    if (TEST_DIALECT === 'postgres') {
      const created = await createPostgresDatabase();
      url = created.url;
      dropDatabase = created.drop;
    }
    env = { DATABASE_URL: url, DATA_DIR: dir, LOG_LEVEL: 'silent', NODE_ENV: 'test' };
  });
  afterAll(async () => {
    await dropDatabase?.();
    rmSync(dir, { recursive: true, force: true });
  });

  async function run(...argv: string[]): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const io: CliIo = { out: (t) => void (stdout += t), err: (t) => void (stderr += t), env };
    const code = await main(argv, io);
    return { code, stdout, stderr };
  }
  const json = (r: Run) => JSON.parse(r.stdout) as Record<string, unknown>;

  describe('migrate', () => {
    it('--status on an empty database lists every migration as pending and changes nothing', async () => {
      const before = await run('migrate', '--status', '--json');
      expect(before.code).toBe(0);
      const status = json(before) as {
        migrations: { name: string; executed_at: string | null }[];
        pending: number;
      };
      expect(status.migrations.length).toBeGreaterThan(0);
      expect(status.pending).toBe(status.migrations.length);
      expect(status.migrations.every((m) => m.executed_at === null)).toBe(true);
      expect(json(await run('migrate', '--status', '--json')).pending).toBe(
        status.migrations.length,
      );

      const text = await run('migrate', '--status');
      expect(text.stdout).toMatch(/^pending\t\S+$/m);
      expect(text.stdout).toContain(`${status.migrations.length} migration(s) pending`);
    });

    it('migrate applies them once, then --status shows them applied', async () => {
      const first = await run('migrate', '--json');
      expect(first.code).toBe(0);
      const applied = json(first).applied as string[];
      expect(applied.length).toBeGreaterThan(0);
      expect(json(await run('migrate', '--json'))).toEqual({ applied: [] });
      expect((await run('migrate')).stdout).toBe('Database schema is up to date.\n');

      const status = json(await run('migrate', '--status', '--json')) as {
        migrations: { name: string; executed_at: string | null }[];
        pending: number;
      };
      expect(status.pending).toBe(0);
      expect(status.migrations.map((m) => m.name)).toEqual(applied);
      for (const m of status.migrations) expect(Date.parse(m.executed_at!)).not.toBeNaN();
      expect((await run('migrate', '--status')).stdout).toMatch(/^applied\t\S+\t\d{4}-\d\d-\d\dT/m);
    });
  });

  describe('help and version', () => {
    const program = buildProgram({ out: () => {}, err: () => {}, env: {} });
    const walk = (command: Command, names: string[]): string[][] =>
      command.commands.flatMap((c) => [[...names, c.name()], ...walk(c, [...names, c.name()])]);
    const commandPaths = walk(program, []);

    it('knows every documented command', () => {
      expect(commandPaths.map((p) => p.join(' '))).toEqual(
        expect.arrayContaining([
          'serve',
          'worker',
          'migrate',
          'org create',
          'org list',
          'token create',
          'token list',
          'token disable',
          'billing close-period',
          'models pull',
        ]),
      );
    });

    it('--help on the program lists the commands, the environment and the exit codes', async () => {
      const r = await run('--help');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Usage: voxkey \[options\] \[command\]/);
      for (const name of ['serve', 'worker', 'migrate', 'org', 'token', 'billing', 'models'])
        expect(r.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
      expect(r.stdout).toContain('DATABASE_URL');
      expect(r.stdout).toMatch(
        /Exit codes: 0 success, 1 failure .*, 2 usage or configuration error, 3 organisation or token not found/,
      );
    });

    it.each(commandPaths.map((p) => [p.join(' ')]))(
      'voxkey %s --help prints its usage and exits 0',
      async (joined) => {
        const names = joined.split(' ');
        const command = names.reduce<Command>(
          (c, name) => c.commands.find((sub) => sub.name() === name)!,
          program,
        );
        const r = await run(...names, '--help');
        expect(r.code).toBe(0);
        expect(r.stderr).toBe('');
        expect(r.stdout).toContain(`Usage: voxkey ${joined}`);
        expect(r.stdout.replace(/\s+/g, ' ')).toContain(command.description());
        expect(r.stdout).toContain('-h, --help');
        for (const option of command.options) expect(r.stdout).toContain(option.flags);
      },
    );

    it('help <command> works like --help', async () => {
      const r = await run('help', 'migrate');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('Usage: voxkey migrate [options]');
      expect(r.stdout).toContain('--status');
    });

    it('--version and -V print the server version', async () => {
      expect(serverVersion()).toMatch(/^\d+\.\d+\.\d+/);
      for (const flag of ['--version', '-V']) {
        const r = await run(flag);
        expect(r).toMatchObject({ code: 0, stdout: `${serverVersion()}\n` });
      }
    });
  });

  describe('usage errors exit 2', () => {
    it('an unknown command', async () => {
      const r = await run('frobnicate');
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/unknown command|too many arguments/i);
    });
    it('an unknown option, with a suggestion', async () => {
      const r = await run('org', 'list', '--jsn');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("unknown option '--jsn'");
      expect(r.stderr).toContain('--json');
    });
    it('a group without a subcommand prints its help to stderr', async () => {
      const r = await run('token');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('Usage: voxkey token');
    });
    it('a missing required option, as JSON with --json', async () => {
      const r = await run('token', 'list', '--json');
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(JSON.parse(r.stderr)).toEqual({
        error: { code: 'usage', message: "required option '--org <id>' not specified" },
      });
    });
    it('an invalid value', async () => {
      const r = await run('token', 'list', '--org', 'abc');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--org must be an organisation id');
    });
    it('without DATABASE_URL, an admin command run where no database is refuses instead of creating an empty one', async () => {
      const elsewhere = mkdtempSync(path.join(tmpdir(), 'voxkey-cli-cwd-'));
      try {
        const { DATABASE_URL: _url, DATA_DIR: _dir, ...withoutDatabase } = process.env;
        const voxkey = (...args: string[]) =>
          new Promise<{ code: number; stderr: string }>((resolve) =>
            execFile(
              process.execPath,
              [BIN, ...args],
              { cwd: elsewhere, env: { ...withoutDatabase, LOG_LEVEL: 'silent' } },
              (error, _stdout, stderr) => resolve({ code: error ? Number(error.code) : 0, stderr }),
            ),
          );
        const refused = await voxkey('org', 'list');
        expect(refused.code).toBe(2);
        expect(refused.stderr).toContain(
          `No Voxkey database at ${path.join(elsewhere, 'data', 'voxkey.db')}`,
        );
        expect(existsSync(path.join(elsewhere, 'data'))).toBe(false);
        // --status changes nothing, not even by creating the file
        expect((await voxkey('migrate', '--status')).code).toBe(0);
        expect(existsSync(path.join(elsewhere, 'data', 'voxkey.db'))).toBe(false);
        expect((await voxkey('migrate')).code).toBe(0);
        expect(await voxkey('org', 'list')).toEqual({ code: 0, stderr: '' });
      } finally {
        rmSync(elsewhere, { recursive: true, force: true });
      }
    });
    it('a DATABASE_URL naming a file that does not exist: refused but by org create, which may create it', async () => {
      const fresh = path.join(dir, 'not-yet', 'voxkey.db');
      const io = (out: string[]): CliIo => ({
        out: () => {},
        err: (t) => void out.push(t),
        env: { ...env, DATABASE_URL: `sqlite:${fresh}` },
      });
      const errors: string[] = [];
      expect(await main(['token', 'list', '--org', '1'], io(errors))).toBe(2);
      expect(errors.join('')).toContain(
        `No Voxkey database at ${fresh} (DATABASE_URL=sqlite:${fresh})`,
      );
      expect(existsSync(fresh)).toBe(false);
      expect(
        await main(['org', 'create', '--name', 'First', '--email', 'ops@first.example'], io([])),
      ).toBe(0);
      expect(existsSync(fresh)).toBe(true);
    });
    it('a database that cannot be reached: one line naming DATABASE_URL without its password, exit 1', async () => {
      let stderr = '';
      const code = await main(['org', 'list'], {
        out: () => {},
        err: (t) => void (stderr += t),
        env: {
          ...env,
          DATABASE_URL: 'postgres://voxkey:hunter2@127.0.0.1:1/nowhere',
          DATABASE_CONNECT_TIMEOUT_MS: '1000',
        },
      });
      expect(code).toBe(1);
      expect(stderr).toMatch(
        /^Could not use the database at DATABASE_URL=postgres:\/\/voxkey:\*\*\*@127\.0\.0\.1:1\/nowhere: .+\n$/,
      );
      expect(stderr).not.toContain('hunter2');
    });
    it('invalid configuration', async () => {
      let stderr = '';
      const code = await main(['org', 'list'], {
        out: () => {},
        err: (t) => void (stderr += t),
        env: { ...env, PORT: 'eighty' },
      });
      expect(code).toBe(2);
      expect(stderr).toContain('PORT');
    });
  });

  describe('billing close-period', () => {
    it('refuses a month that has not ended (exit 2): a month is invoiced once', async () => {
      const thisMonth = new Date().toISOString().slice(0, 7);
      const r = await run('billing', 'close-period', '--month', thisMonth);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--month ${thisMonth} has not ended yet`);
      const invoices = await run('billing', 'close-period', '--month', '2020-01', '--json');
      expect(invoices.code).toBe(0);
      expect(json(invoices)).toEqual({ invoices: [] });
    });
  });

  describe('organisations and tokens', () => {
    let orgId: number;

    it('org list is empty at first', async () => {
      expect(json(await run('org', 'list', '--json'))).toEqual({ results: [] });
      expect((await run('org', 'list')).stdout).toBe('No organisations.\n');
    });

    it('org create, then org list shows it', async () => {
      const created = await run(
        'org',
        'create',
        '--name',
        'Acme',
        '--email',
        'ops@acme.example',
        '--json',
      );
      expect(created.code).toBe(0);
      orgId = (json(created).organisation as { id: number }).id;
      await run('org', 'create', '--name', 'Other', '--email', 'ops@other.example');

      const listed = json(await run('org', 'list', '--json')).results as {
        id: number;
        name: string;
        email: string;
        created_at: string;
      }[];
      expect(listed.map((o) => [o.name, o.email])).toEqual([
        ['Acme', 'ops@acme.example'],
        ['Other', 'ops@other.example'],
      ]);
      expect(listed[0]).toMatchObject({ id: orgId });
      const text = (await run('org', 'list')).stdout.split('\n');
      expect(text[0]).toBe('ID\tNAME\tEMAIL\tCREATED');
      expect(text[1]).toMatch(new RegExp(`^${orgId}\\tAcme\\tops@acme.example\\t\\d{4}-`));
    });

    it('another encryption key than the data was sealed with is refused at start (exit 2), and a malformed one before migrating', async () => {
      let stderr = '';
      const withKey = (key: string) =>
        main(['org', 'list'], {
          out: () => {},
          err: (t) => void (stderr += t),
          env: { ...env, VOXKEY_ENCRYPTION_KEY: key },
        });
      expect(await withKey(randomBytes(32).toString('hex'))).toBe(2);
      expect(stderr).toContain('VOXKEY_ENCRYPTION_KEY does not open the data this database holds');
      stderr = '';
      expect(await withKey('abcdef')).toBe(2);
      expect(stderr).toMatch(/VOXKEY_ENCRYPTION_KEY: must be 32 bytes/);
    });

    it('org create --plan takes a plan id or name; an unknown one lists the plans (exit 2)', async () => {
      const byName = json(
        await run(
          'org',
          'create',
          '--name',
          'Paid',
          '--email',
          'p@paid.example',
          '--plan',
          'Starter',
          '--json',
        ),
      );
      const byId = json(
        await run(
          'org',
          'create',
          '--name',
          'Paid2',
          '--email',
          'p@paid2.example',
          '--plan',
          '2',
          '--json',
        ),
      );
      for (const created of [byName, byId])
        expect(
          (created.organisation as { subscription: { plan_id: number } }).subscription.plan_id,
        ).toBe(2);
      const unknown = await run(
        'org',
        'create',
        '--name',
        'X',
        '--email',
        'x@x.example',
        '--plan',
        'Gold',
      );
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toContain(
        'No plan named Gold (plans: 1 Sandbox, 2 Starter, 3 Growth, 4 Enterprise)',
      );
    });

    it('voiceprints models: an organisation that does not exist is exit 3, as for tokens', async () => {
      const r = await run('voiceprints', 'models', '--org', '999999');
      expect(r.code).toBe(3);
      expect(r.stderr).toContain('No organisation with id 999999');
      expect((await run('voiceprints', 'models', '--org', String(orgId))).code).toBe(0);
    });

    it('token list shows the trial token and a created one, never a secret', async () => {
      const created = json(
        await run('token', 'create', '--org', String(orgId), '--name', 'ci', '--json'),
      ) as { bearer: string; token: { id: number } };
      const r = await run('token', 'list', '--org', String(orgId), '--json');
      expect(r.code).toBe(0);
      const tokens = json(r).results as { id: number; friendly_name: string; enabled: boolean }[];
      expect(tokens.length).toBe(2);
      expect(tokens.at(-1)).toMatchObject({
        id: created.token.id,
        friendly_name: 'ci',
        enabled: true,
        expires_at: null,
      });
      expect(r.stdout).not.toContain(created.bearer);
      expect(r.stdout).not.toMatch(/vk_(live|trial)_/);

      const text = (await run('token', 'list', '--org', String(orgId))).stdout;
      expect(text).toMatch(new RegExp(`^${created.token.id}\\tenabled\\tnever\\tci$`, 'm'));
    });

    it('token disable disables exactly that token', async () => {
      const tokens = json(await run('token', 'list', '--org', String(orgId), '--json')).results as {
        id: number;
        enabled: boolean;
      }[];
      const target = tokens.at(-1)!;
      const r = await run(
        'token',
        'disable',
        '--org',
        String(orgId),
        '--token',
        String(target.id),
        '--json',
      );
      expect(r.code).toBe(0);
      expect(json(r)).toMatchObject({ id: target.id, enabled: false });
      const after = json(await run('token', 'list', '--org', String(orgId), '--json')).results as {
        id: number;
        enabled: boolean;
      }[];
      expect(after.map((t) => t.enabled)).toEqual([true, false]);
      const text = await run(
        'token',
        'disable',
        '--org',
        String(orgId),
        '--token',
        String(target.id),
      );
      expect(text.stdout).toMatch(
        new RegExp(`^Token ${target.id} \\(ci\\) of organisation ${orgId} disabled\\.$`, 'm'),
      );
    });

    it('an unknown organisation or token exits 3, without touching another organisation', async () => {
      const other = (json(await run('org', 'list', '--json')).results as { id: number }[]).find(
        (o) => o.id !== orgId,
      )!;
      const otherToken = (
        json(await run('token', 'list', '--org', String(other.id), '--json')).results as {
          id: number;
        }[]
      )[0]!;

      const crossOrg = await run(
        'token',
        'disable',
        '--org',
        String(orgId),
        '--token',
        String(otherToken.id),
        '--json',
      );
      expect(crossOrg.code).toBe(3);
      expect(JSON.parse(crossOrg.stderr)).toEqual({
        error: {
          code: 'not_found',
          message: `Organisation ${orgId} has no token with id ${otherToken.id}`,
        },
      });
      expect(
        (
          json(await run('token', 'list', '--org', String(other.id), '--json')).results as {
            enabled: boolean;
          }[]
        )[0]!.enabled,
      ).toBe(true);

      for (const argv of [
        ['token', 'list', '--org', '999999'],
        ['token', 'disable', '--org', '999999', '--token', '1'],
        ['token', 'create', '--org', '999999', '--name', 'x'],
      ]) {
        const r = await run(...argv);
        expect(r.code).toBe(3);
        expect(r.stderr).toBe('No organisation with id 999999\n');
      }
    });
  });
});
