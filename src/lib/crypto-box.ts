import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
/** Pinned: GCM accepts tags down to 4 bytes unless told otherwise, and a short tag is a forgeable one. */
const TAG_BYTES = 16;
/** HKDF context of the key id: bound to this one use, so the id says nothing usable about the cipher key. */
const KEY_ID_INFO = 'dialer-control-plane/crypto-box/key-id/v1';
const KEY_ID_BYTES = 6;

const B64URL = '[A-Za-z0-9_-]';
/** v1 (before key ids): v1.<iv>.<tag>.<ciphertext>; a 12-byte IV is 16 base64url characters, a 16-byte tag 22. */
const V1 = new RegExp(`^v1\\.(${B64URL}{16})\\.(${B64URL}{22})\\.(${B64URL}*)$`);
/** v2: v2.<key id>.<iv>.<tag>.<ciphertext>; the key id is 12 lowercase hex digits. */
const V2 = new RegExp(`^v2\\.([0-9a-f]{${KEY_ID_BYTES * 2}})\\.(${B64URL}{16})\\.(${B64URL}{22})\\.(${B64URL}*)$`);

/**
 * The id of the key a secret makes: an HKDF output of the secret, so every host configured with
 * the same secret agrees on it without anyone assigning ids, and a new secret gets a new id.
 */
export function encryptionKeyId(secret: string): string {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), KEY_ID_INFO, KEY_ID_BYTES)).toString('hex');
}

/** Whether a value has the shape of a CryptoBox ciphertext (any version), without opening it. */
export function isSealed(value: string): boolean {
  return V1.test(value) || V2.test(value);
}

/** The key id a ciphertext names, null for a v1 ciphertext (which names none) or a value that is not one. */
export function sealedKeyId(value: string): string | null {
  return V2.exec(value)?.[1] ?? null;
}

interface Key {
  id: string;
  cipherKey: Buffer;
}

function keyOf(secret: string): Key {
  // The configured secret may be any length; the cipher key is its SHA-256 (as it always was, so
  // ciphertexts written before key ids still open).
  return { id: encryptionKeyId(secret), cipherKey: createHash('sha256').update(secret, 'utf8').digest() };
}

function open(key: Buffer, iv: string, tag: string, ct: string, aad: string | null): string {
  const tagBytes = Buffer.from(tag, 'base64url');
  const ivBytes = Buffer.from(iv, 'base64url');
  if (tagBytes.length !== TAG_BYTES || ivBytes.length !== IV_BYTES) throw new Error('unrecognized ciphertext');
  const decipher = createDecipheriv(ALGORITHM, key, ivBytes, { authTagLength: TAG_BYTES });
  if (aad !== null) decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tagBytes);
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

/**
 * AES-256-GCM for values that must be readable again but never stored in clear (queued mail
 * carrying a one-shot link, agent notes, provider secrets). Format: v2.<key id>.<iv>.<tag>.<ciphertext>
 * (base64url parts), the `v2.<key id>` header bound as associated data. Encryption always uses the
 * current key; decryption picks the key by id among the current and the previous ones, so a key
 * rotation (docs/runbook.md) can re-encrypt while both read. v1 ciphertexts, written before key
 * ids, still open under whichever configured key authenticates them.
 */
export class CryptoBox {
  private readonly current: Key;
  private readonly keys: Map<string, Key>;

  constructor(secret: string, previous: readonly string[] = []) {
    this.current = keyOf(secret);
    this.keys = new Map([this.current, ...previous.map(keyOf)].map((k) => [k.id, k]));
  }

  /** The id new ciphertexts carry. */
  get currentKeyId(): string {
    return this.current.id;
  }

  encrypt(plaintext: string): string {
    const header = `v2.${this.current.id}`;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.current.cipherKey, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(header, 'utf8'));
    const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [header, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  decrypt(sealed: string): string {
    const v2 = V2.exec(sealed);
    if (v2) {
      const [, kid, iv, tag, ct] = v2;
      const key = this.keys.get(kid!);
      if (!key) throw new Error(`ciphertext under key ${kid}, which is not configured`);
      return open(key.cipherKey, iv!, tag!, ct!, `v2.${kid}`);
    }
    const v1 = V1.exec(sealed);
    if (!v1) throw new Error('unrecognized ciphertext');
    const [, iv, tag, ct] = v1;
    // A v1 ciphertext names no key: the tag tells which configured key sealed it (current first).
    for (const key of this.keys.values()) {
      try {
        return open(key.cipherKey, iv!, tag!, ct!, null);
      } catch {
        // not this key
      }
    }
    throw new Error('ciphertext does not open under any configured key');
  }

  /** Whether a ciphertext is already under the current key (a rotation leaves it as it is). */
  isCurrent(sealed: string): boolean {
    return sealedKeyId(sealed) === this.current.id;
  }

  /** The same plaintext sealed again under the current key. */
  reseal(sealed: string): string {
    return this.encrypt(this.decrypt(sealed));
  }
}
