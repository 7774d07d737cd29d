import { AppError } from '../errors';

/**
 * The store cannot accept or serve objects right now (disk full or read-only, S3 unreachable,
 * refusing the credentials, answering 5xx). It is the API's 503 storage_unavailable, so a route
 * that lets it through answers correctly without mapping it. `detail` and `cause` are for the log
 * only: the response body never names the backend's failure.
 */
export class StorageUnavailableError extends AppError {
  constructor(
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(503, 'storage_unavailable', 'the object store cannot accept or serve objects now; retry later');
    this.name = 'StorageUnavailableError';
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/**
 * No object under the key. Deliberately not an AppError: whether a missing object is the caller's
 * 404 (purged audio) or an internal fault (an export row whose audio vanished) is the caller's call.
 */
export class ObjectNotFoundError extends Error {
  constructor(readonly key: string) {
    super('no object under this key');
    this.name = 'ObjectNotFoundError';
  }
}
