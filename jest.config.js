/** @type {import('jest').Config} */
const transform = { '^.+\\.ts$': ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } } }] };

// The generated Prisma client imports its own .ts files with .js suffixes.
const moduleNameMapper = { '^(\\.{1,2}/.*)\\.js$': '$1' };

module.exports = {
  testTimeout: 60_000,
  maxWorkers: 2,
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
