import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import type { AppDeps } from '../src/deps';
import { createMetrics } from '../src/lib/metrics';
import { buildOpenApiDocument } from '../src/modules/docs/docs.routes';

/**
 * The document a default deployment publishes at GET /v1/openapi.json, built in-process without a
 * database, Temporal or switch: building the route table reads only configuration, so every other
 * dependency is a stand-in that fails loudly if anything calls it.
 */
export function buildDefaultDocument() {
  const config = loadConfig({ NODE_ENV: 'development' });
  const unavailable = (name: string): unknown =>
    new Proxy(() => undefined, {
      get: (_t, key) => (key === 'then' ? undefined : unavailable(`${name}.${String(key)}`)),
      apply: () => {
        throw new Error(`${name}() called while building the OpenAPI document`);
      },
    });
  const deps = new Proxy({ config } as AppDeps, {
    get: (target, key: string) => (key in target ? target[key as keyof AppDeps] : unavailable(key)),
  });
  return buildOpenApiDocument(createApp(deps, createMetrics().http));
}
