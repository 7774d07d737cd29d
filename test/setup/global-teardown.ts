export default async function globalTeardown(): Promise<void> {
  await globalThis.__TEMPORAL_DEV_SERVER__?.stop();
}
