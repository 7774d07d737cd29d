import type { Client as TemporalClient } from '@temporalio/client';
import type { Config } from './config';
import type { ResolvedCredential } from './lib/auth';
import type { CredentialCache } from './lib/credential-cache';
import type { CryptoBox } from './lib/crypto-box';
import type { Database } from './lib/db';
import type { Resolver } from './lib/egress';
import type { Logger } from './lib/logger';
import type { Mailer } from './lib/mailer';
import type { ObjectStore, UrlSigner } from './lib/object-store';
import type { RateLimits } from './lib/rate-limit';
import type { EslManager } from './switch/esl';
import type { BrowserSoftphones } from './modules/agents/softphones';
import type { TenantRecord } from './modules/tenants/tenant.views';

/** Everything a route, service or activity factory may depend on; wired once at start-up. */
export interface AppDeps {
  config: Config;
  db: Database;
  logger: Logger;
  rateLimits: RateLimits;
  mailer: Mailer;
  box: CryptoBox;
  /** Verified against when a login names no usable account, to equalize timing. */
  decoyPasswordHash: string;
  temporal: TemporalClient | null;
  /** The switch control link; null where this process does not talk to the switch. */
  esl: EslManager | null;
  /** DNS for the egress check (tests substitute one that answers chosen addresses). */
  resolver: Resolver;
  /** Recordings and recording exports (OBJECT_STORE). */
  objectStore: ObjectStore;
  /** Signs the local store's /files URLs; null when the store is S3 (it presigns its own). */
  fileSigner: UrlSigner | null;
  /** Resolved bearers kept for at most CREDENTIAL_CACHE_TTL_MS; absent: every request resolves in PostgreSQL. */
  credentials?: CredentialCache<ResolvedCredential>;
  /** The caller's tenant row for `GET /v1/me`, kept and forgotten exactly as `credentials` (same TTL, same writes). */
  tenantRows?: CredentialCache<TenantRecord>;
  /** The embedded simulator's browser softphones (SIM_AUTO_REGISTER); absent where browsers register themselves. */
  softphones?: BrowserSoftphones;
}
