import canonicalize from 'canonicalize';

/**
 * RFC 8785 JSON Canonicalization Scheme: the bytes every evidence artifact hashes. Any JCS
 * implementation (Python `jcs`, Go `json-canonicalization`, npm `canonicalize`) reproduces them,
 * so a recipient can re-hash a part without this code.
 */
export function canonicalJson(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new TypeError('canonicalJson: the value has no JSON form');
  return text;
}
