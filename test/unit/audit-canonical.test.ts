import { AUDIT_GENESIS_HASH, canonicalAuditText, sha256Of, verifyLinks, type ChainLink } from '../../src/lib/audit';

const base: Omit<ChainLink, 'hash'> = {
  tenant_id: '6f1c2f0e-2b8a-4c1e-9a57-1f0f8a7c9d10',
  lane: '7',
  seq: '3',
  prev_hash: 'a'.repeat(64),
  occurred_at: '2026-11-22T10:00:00.000Z',
  actor_type: 'user',
  actor_id: 'u1',
  action: 'x.y',
  subject_type: 'debt',
  subject_id: 'd1',
  payload_sha256: 'b'.repeat(64),
};

describe('canonicalAuditText', () => {
  it('length-prefixes every field with its UTF-8 byte length', () => {
    expect(canonicalAuditText({ ...base, actor_id: 'ñ' })).toContain('2:ñ;');
  });

  it('distinguishes NULL from an empty string', () => {
    expect(canonicalAuditText({ ...base, subject_id: null })).not.toBe(canonicalAuditText({ ...base, subject_id: '' }));
  });

  it('distinguishes text moved across a field boundary', () => {
    const a = canonicalAuditText({ ...base, subject_type: 'deb', subject_id: 'td1' });
    const b = canonicalAuditText({ ...base, subject_type: 'debt', subject_id: 'd1' });
    expect(a).not.toBe(b);
  });

  it('cannot be forged by a field that contains separators', () => {
    const sneaky = canonicalAuditText({ ...base, actor_id: 'u1;2:x.y;', action: '' });
    expect(sneaky).not.toBe(canonicalAuditText(base));
  });
});

describe('verifyLinks', () => {
  it('accepts a chain built link by link and names the first link that breaks', () => {
    const links: ChainLink[] = [];
    let prev = AUDIT_GENESIS_HASH;
    for (let seq = 1; seq <= 3; seq += 1) {
      const link = { ...base, seq: String(seq), prev_hash: prev };
      const hash = sha256Of(canonicalAuditText(link));
      links.push({ ...link, hash });
      prev = hash;
    }
    expect(verifyLinks(links)).toBeNull();
    expect(verifyLinks([links[0]!, { ...links[1]!, payload_sha256: 'c'.repeat(64) }, links[2]!])).toBe('2');
    expect(verifyLinks([links[0]!, links[2]!])).toBe('3');
    expect(verifyLinks(links.slice(1), links[0]!.hash)).toBeNull();
  });
});
