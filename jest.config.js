/** @type {import('jest').Config} */
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] };

// The generated Prisma client imports its own .ts files with .js suffixes.
const moduleNameMapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };

module.exports = {
  testTimeout: 60_000,
  maxWorkers: 2,
  // Every test file loads the product afresh in its worker, and what a file leaves reachable (native
  // runtimes, process listeners) keeps its modules alive: a worker's heap grew by about 30 MB a file
  // until one ran out of memory 700 s into a CI run, and long before that its slow full collections
  // stalled the wall-clock tests. A worker past this is replaced between files.
  workerIdleMemoryLimit: '1GB',
  testSequencer: '<rootDir>/test/setup/sequencer.js',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      moduleNameMapper,
      roots: ['<rootDir>/test/unit', '<rootDir>/src'],
      testMatch: ['**/*.test.ts'],
    },
    {
      displayName: 'integration',
      testEnvironment: 'node',
      transform,
      moduleNameMapper,
      roots: ['<rootDir>/test/integration'],
      testMatch: ['**/*.test.ts'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
};
