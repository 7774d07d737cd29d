import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { withTenant } from '../../src/lib/tenancy';
import { recordingStorageKey } from '../../src/modules/recordings/recording-capture.service';
import { recordingRetentionSweepSignal, recordingRetentionWorkflow, recordingRetentionWorkflowId } from '../../workflows/recording-retention.workflow';
import { runWorker, waitFor, type RunningWorker } from '../helpers/dial-loop';
import { provisionTenant, startTestApp, type ProvisionedTenant, type TestApp } from '../helpers/harness';

jest.setTimeout(90_000);

let app: TestApp;
let worker: RunningWorker;
let owner: Client;
const taskQueue = `recording-retention-${randomUUID()}`;

beforeAll(async () => {
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: taskQueue });
  worker = await runWorker(app, taskQueue);
  owner = new Client({ connectionString: process.env.TEST_DATABASE_URL });
  await owner.connect();
});
afterAll(async () => {
  await owner?.end();
  await worker?.stop();
  await app?.close();
});

const WAV = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WAVE'), Buffer.alloc(32)]);

/**
 * A stored recording of a (synthetic) call. retained_until is moved as the test superuser, the
 * way only an operator could: the service itself freezes it at creation.
 */
async function storedRecording(tenant: ProvisionedTenant, opts: { retainedUntil: string; legalHold?: boolean }) {
  const callUuid = randomUUID();
  const startedAt = new Date();
  const key = recordingStorageKey(tenant.tenantId, callUuid, startedAt);
  await app.deps.objectStore.put(key, WAV, { contentType: 'audio/wav' });
  const row = await withTenant(app.deps.db, tenant.tenantId, async (tx) => {
    const debt = await tx.debt.create({ data: { tenantId: tenant.tenantId, externalRef: `ret-${randomUUID()}`, consumerRef: 'c-1', amountCents: 5000n } });
    const attempt = await tx.callAttempt.create({
      data: { tenantId: tenant.tenantId, debtId: debt.id, consumerRef: 'c-1', debtKey: debt.externalRef, callUuid, toNumber: '+13035550110', startedAt },
    });
    return tx.recording.create({
      data: {
        tenantId: tenant.tenantId,
        callAttemptId: attempt.id,
        callUuid,
        debtId: debt.id,
        phoneNumber: '+13035550110',
        startedAt,
        storageKey: key,
        contentType: 'audio/wav',
        sizeBytes: BigInt(WAV.length),
        sha256: 'x'.repeat(64),
        retainedUntil: new Date('2099-01-01'),
        legalHold: opts.legalHold ?? false,
      },
    });
  });
  await owner.query('UPDATE recordings SET retained_until = $2::date WHERE id = $1', [row.id, opts.retainedUntil]);
  return { id: row.id, key, callUuid };
}

const isoDate = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);

const recording = (tenant: ProvisionedTenant, id: string) => withTenant(app.deps.db, tenant.tenantId, (tx) => tx.recording.findUniqueOrThrow({ where: { id } }));

async function sweepNow(): Promise<void> {
  await app.deps.temporal!.workflow.getHandle(recordingRetentionWorkflowId(taskQueue)).signal(recordingRetentionSweepSignal);
}

const purged = (tenant: ProvisionedTenant, id: string) => async () => ((await recording(tenant, id)).audioPurgedAt ? true : undefined);

describe('recording retention', () => {
  it('purges the audio of an expired unheld recording, keeps its metadata, and spares held and unexpired ones until released', async () => {
    const tenant = await provisionTenant(app);
    const expired = await storedRecording(tenant, { retainedUntil: isoDate(-1) });
    const held = await storedRecording(tenant, { retainedUntil: isoDate(-30), legalHold: true });
    const lastDay = await storedRecording(tenant, { retainedUntil: isoDate(0) });

    await sweepNow();
    await waitFor(purged(tenant, expired.id), 30_000, 'the expired recording purged');

    const row = await recording(tenant, expired.id);
    expect(row).toMatchObject({ callUuid: expired.callUuid, storageKey: expired.key, phoneNumber: '+13035550110', legalHold: false });
    expect(await app.deps.objectStore.head(expired.key)).toBeNull();
    const audit = await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.auditLog.findMany({ where: { action: 'recording.audio_purged' } }));
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actorType: 'workflow', subjectType: 'recording', subjectId: expired.id });
    expect(audit[0]!.payload).toMatchObject({ call_uuid: expired.callUuid, storage_key: expired.key, retained_until: isoDate(-1) });

    // The same pass listed neither the held nor the last-day recording.
    for (const kept of [held, lastDay]) {
      expect((await recording(tenant, kept.id)).audioPurgedAt).toBeNull();
      expect(await app.deps.objectStore.head(kept.key)).toMatchObject({ size: WAV.length });
    }

    // Releasing the hold makes it due at the next sweep.
    await withTenant(app.deps.db, tenant.tenantId, (tx) => tx.recording.update({ where: { id: held.id }, data: { legalHold: false } }));
    await sweepNow();
    await waitFor(purged(tenant, held.id), 30_000, 'the released recording purged');
    expect(await app.deps.objectStore.head(held.key)).toBeNull();
    expect((await recording(tenant, lastDay.id)).audioPurgedAt).toBeNull();
  });

  it('sweeps on its interval without a signal, and continues as new after sweepsPerRun sweeps', async () => {
    const tenant = await provisionTenant(app);
    const handle = await app.deps.temporal!.workflow.start(recordingRetentionWorkflow, {
      workflowId: `recording-retention-test:${randomUUID()}`,
      taskQueue,
      args: [{ sweepIntervalMs: 300, sweepsPerRun: 2 }],
    });
    try {
      const firstRunId = handle.firstExecutionRunId;
      await waitFor(async () => ((await handle.describe()).runId !== firstRunId ? true : undefined), 30_000, 'a continued-as-new run');
      const expired = await storedRecording(tenant, { retainedUntil: isoDate(-2) });
      await waitFor(purged(tenant, expired.id), 30_000, 'the interval sweep');
      expect(await app.deps.objectStore.head(expired.key)).toBeNull();
    } finally {
      await handle.terminate('test over');
    }
  });
});
