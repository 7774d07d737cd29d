import { randomUUID } from 'node:crypto';
import { smokeWorkflow } from '../../workflows';
import { createWorker } from '../../workers/worker';
import { provisionTenant, startTestApp, type TestApp } from '../helpers/harness';

describe('service smoke', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('serves /healthz with the spec version', async () => {
    const res = await app.request('GET', '/healthz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', service: 'dialer-control-plane', version: '0.36.0', checks: { database: 'ok', switch: 'not_configured' } });
    expect(res.headers['x-request-id']).toBeTruthy();
  });

  it('runs a workflow whose activity writes to PostgreSQL on a real Temporal server', async () => {
    const tenant = await provisionTenant(app);
    const taskQueue = `smoke-${randomUUID()}`;
    const { worker, connection } = await createWorker(app.deps, {
      address: app.config.TEMPORAL_ADDRESS!,
      namespace: app.config.TEMPORAL_NAMESPACE,
      taskQueue,
      workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
    });
    try {
      const result = await worker.runUntil(
        app.deps.temporal!.workflow.execute(smokeWorkflow, {
          taskQueue,
          workflowId: `smoke-${tenant.tenantId}`,
          args: [{ tenantId: tenant.tenantId }],
        }),
      );
      // seq 1 is tenant.created from provisioning; the smoke check is the next link.
      expect(result.auditSeq).toBe('2');
    } finally {
      await connection.close();
    }
  });
});
