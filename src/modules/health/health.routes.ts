import { createRoute } from '@hono/zod-openapi';
import { SERVICE_NAME, SERVICE_VERSION } from '../../config';
import type { AppDeps } from '../../deps';
import { createRouter, errorResponses, jsonContent, z } from '../../lib/openapi';
import { pingDatabase } from './health.repository';

const CheckStatus = z.enum(['ok', 'down']);

export const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded']),
    service: z.string(),
    version: z.string(),
    checks: z.object({
      database: CheckStatus,
      switch: z.enum(['ok', 'down', 'not_configured']).openapi({ description: 'The ESL control link of this process' }),
    }),
  })
  .openapi('Health');

export function healthRoutes(deps: AppDeps) {
  const app = createRouter();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/healthz',
      tags: ['Operations'],
      summary: 'Liveness and dependency health (no auth)',
      description: '`status` is `degraded` when a dependency check fails; the answer is 200 either way so the body can be read.',
      responses: { 200: jsonContent(HealthSchema, 'Health'), ...errorResponses(400) },
    }),
    async (c) => {
      const database = await pingDatabase(deps.db).then(
        () => 'ok' as const,
        () => 'down' as const,
      );
      const link = deps.esl ? (deps.esl.isUp() ? ('ok' as const) : ('down' as const)) : ('not_configured' as const);
      const healthy = database === 'ok' && link !== 'down';
      return c.json(
        { status: healthy ? ('ok' as const) : ('degraded' as const), service: SERVICE_NAME, version: SERVICE_VERSION, checks: { database, switch: link } },
        200,
      );
    },
  );
  return app;
}
