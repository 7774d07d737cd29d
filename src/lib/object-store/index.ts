import { StorageUnavailableError } from './errors';
import { LocalObjectStore, type LocalStoreOptions } from './local-store';
import { S3ObjectStore, type S3StoreOptions } from './s3-store';
import type { ObjectStore } from './types';

export { attachmentDisposition, sanitizeDownloadName } from './content-disposition';
export { ObjectNotFoundError, StorageUnavailableError } from './errors';
export { filesHandler, type FilesHandlerOptions, type SignedPathVerifier } from './files-handler';
export { assertValidKey, isValidKey, MAX_SIGNED_URL_SECONDS } from './keys';
export { LocalObjectStore, type LocalStoreOptions } from './local-store';
export { DEFAULT_PART_SIZE } from './parts';
export { checkS3Endpoint, S3ObjectStore, type S3StoreOptions } from './s3-store';
export { UrlSigner } from './signed-url';
export type { ObjectInfo, ObjectStore, ObjectStream, PutOptions, SignedUrl, SignedUrlOptions, StoreHealth } from './types';

export type ObjectStoreOptions = ({ kind: 'local' } & LocalStoreOptions) | ({ kind: 's3' } & S3StoreOptions);

/** The deployment's store; builds clients only, so it never fails on an unreachable backend. */
export function createObjectStore(options: ObjectStoreOptions): ObjectStore {
  return options.kind === 'local' ? new LocalObjectStore(options) : new S3ObjectStore(options);
}

/** For a route about to write (an export): 503 storage_unavailable now rather than a failed job later. */
export async function ensureStoreAvailable(store: ObjectStore): Promise<void> {
  const health = await store.check();
  if (!health.ok) throw new StorageUnavailableError(health.reason);
}
