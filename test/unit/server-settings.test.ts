import { serverSettingWarnings } from '../../src/db/server-settings';

const healthy = { fsync: 'on', synchronous_commit: 'on', full_page_writes: 'on', autovacuum: 'on' };

describe('serverSettingWarnings', () => {
  it('says nothing about a server with every setting the product relies on', () => {
    expect(serverSettingWarnings(healthy)).toEqual([]);
  });

  it.each(['fsync', 'synchronous_commit', 'full_page_writes', 'autovacuum'])('warns when %s is off, saying what it costs', (setting) => {
    const warnings = serverSettingWarnings({ ...healthy, [setting]: 'off' });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ setting, value: 'off' });
    expect(warnings[0]!.consequence.length).toBeGreaterThan(20);
  });

  it('takes synchronous_commit local, remote_write and remote_apply as durable on this server', () => {
    for (const value of ['local', 'remote_write', 'remote_apply']) {
      expect(serverSettingWarnings({ ...healthy, synchronous_commit: value })).toEqual([]);
    }
  });

  it('warns about each lacking setting at once and ignores settings it was not given', () => {
    expect(serverSettingWarnings({ fsync: 'off', autovacuum: 'off' }).map((w) => w.setting)).toEqual(['fsync', 'autovacuum']);
  });
});
