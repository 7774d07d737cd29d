import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, operations, paths } from './openapi';

export type { components, operations, paths };

/** A schema of the published document by name: `Schema<'Debt'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];

/** The shared error envelope every 4xx and 5xx answer carries. */
export type ApiError = Schema<'Error'>;

export type DialerClient = Client<paths>;

export interface DialerClientOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** Where the API listens, e.g. `https://dialer.example.com` (the document's `servers` entry). */
  baseUrl: string;
  /** A tenant credential (dd_ API key, ddu_ session, ddw_ widget token) or the operator token, sent as the bearer. */
  token?: string;
  /** Headers sent with every request (after the bearer, so an explicit authorization wins). */
  headers?: Record<string, string>;
}

/**
 * A client typed by the published OpenAPI document (src/client/openapi.d.ts, `npm run client:generate`):
 * paths, parameters, bodies and every documented response are checked at compile time.
 */
export function createDialerClient({ baseUrl, token, headers, ...rest }: DialerClientOptions): DialerClient {
  return createClient<paths>({ ...rest, baseUrl, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers } });
}
