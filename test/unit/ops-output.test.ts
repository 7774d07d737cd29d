import { maskPhones, OpsRefusal, positiveIntArg, table, toJson, UsageError, uuidArg } from '../../src/ops/output';
import { runsQuery } from '../../src/ops/campaigns.commands';
import { commandPaths, runCli, type CliEnv } from '../../src/ops/program';

function env(context: CliEnv['context'] = () => Promise.reject(new Error('must not connect'))) {
  const out: string[] = [];
  const err: string[] = [];
  const cliEnv: CliEnv = { io: { out: (s) => out.push(s), err: (s) => err.push(s) }, context, staleSeconds: 900 };
  return { cliEnv, out, err };
}

describe('maskPhones', () => {
  it('cuts every phone-looking value to its last four digits, wherever it sits', () => {
    expect(maskPhones({ to: '+15551234567', nested: [{ q: '5551234567' }], note: 'called +525512345678 twice', n: 15551234567 })).toEqual({
      to: '***4567',
      nested: [{ q: '***4567' }],
      note: 'called ***5678 twice',
      n: 15551234567,
    });
  });

  it('leaves ids, timestamps, short numbers and nulls alone', () => {
    const value = { id: '12345678-1234-4234-8234-123456789012', at: '2026-11-24T03:02:11.412Z', ext: '1001', tick: '42', none: null };
    expect(maskPhones(value)).toEqual(value);
  });
});

describe('argument checks', () => {
  it('uuidArg lower-cases a UUID and refuses anything else as a usage error', () => {
    expect(uuidArg('tenant', 'ABCDEF01-2345-4678-89AB-CDEF01234567')).toBe('abcdef01-2345-4678-89ab-cdef01234567');
    expect(() => uuidArg('tenant', 'acme')).toThrow(UsageError);
  });

  it('positiveIntArg accepts 1.. and refuses 0, negatives, decimals and words', () => {
    expect(positiveIntArg('--limit', '25')).toBe(25);
    for (const bad of ['0', '-1', '1.5', 'ten', '']) expect(() => positiveIntArg('--limit', bad)).toThrow(UsageError);
  });
});

describe('runsQuery', () => {
  it('filters by workflow type, then tenant, campaign and running status as asked', () => {
    expect(runsQuery({ status: 'all' })).toBe("WorkflowType = 'campaignRunWorkflow'");
    expect(runsQuery({ tenant: 't-1', campaign: 'c-1', status: 'running' })).toBe(
      "WorkflowType = 'campaignRunWorkflow' AND TenantId = 't-1' AND CampaignId = 'c-1' AND ExecutionStatus = 'Running'",
    );
  });
});

describe('output', () => {
  it('tables have no colour codes; JSON writes bigints as strings', () => {
    const text = table(['a', 'b'], [[1, null]]);
    expect(text.includes('\u001b[')).toBe(false);
    expect(text).toContain('-');
    expect(JSON.parse(toJson({ n: 12n }))).toEqual({ n: '12' });
  });
});

describe('runCli', () => {
  it('--help of every command exits 0 with examples and never connects', async () => {
    const paths = commandPaths(env().cliEnv);
    expect(paths.length).toBeGreaterThanOrEqual(13);
    for (const p of paths) {
      const e = env();
      expect(await runCli([...p, '--help'], e.cliEnv)).toBe(0);
      expect(e.out.join('')).toContain(`Usage: ops ${p.join(' ')}`);
      if (p.length === 2) expect(e.out.join('')).toContain('Examples:');
    }
  });

  it('usage errors exit 2 before anything connects', async () => {
    const cases = [
      ['nonsense'],
      ['campaigns'],
      ['campaigns', 'show', 'not-a-uuid', '3f0b6f55-0d4c-4a3c-9a77-4b0b0a9f1e2d'],
      ['campaigns', 'show', '3f0b6f55-0d4c-4a3c-9a77-4b0b0a9f1e2d'],
      ['campaigns', 'list', '--status', 'paused'],
      ['campaigns', 'list', '--limit', '0'],
      ['campaigns', 'reset', '3f0b6f55-0d4c-4a3c-9a77-4b0b0a9f1e2d', '3f0b6f55-0d4c-4a3c-9a77-4b0b0a9f1e2d', '--to', 'yesterday'],
      ['webhooks', 'dead-letters'],
      ['exports', 'stuck', '--older-than', '-5'],
    ];
    for (const argv of cases) {
      const e = env();
      expect({ argv, code: await runCli(argv, e.cliEnv) }).toEqual({ argv, code: 2 });
      expect(e.err.join('')).toMatch(/error/);
    }
  });

  it('a refusal exits 1 with one masked line on stderr (and its data on stdout with --json)', async () => {
    const e = env(() => Promise.reject(new OpsRefusal('run of +15551234567 diverged', { ok: false, to: '+15551234567' })));
    expect(await runCli(['--json', 'exports', 'stuck'], e.cliEnv)).toBe(1);
    expect(e.err).toEqual(['refused: run of ***4567 diverged']);
    expect(JSON.parse(e.out.join(''))).toEqual({ ok: false, to: '***4567' });

    const failed = env(() => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:7233\n    at stack')));
    expect(await runCli(['exports', 'stuck'], failed.cliEnv)).toBe(1);
    expect(failed.err).toEqual(['failed: connect ECONNREFUSED 127.0.0.1:7233']);
  });
});
