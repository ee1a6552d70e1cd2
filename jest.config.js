/** Unit tests (test/unit) need no I/O; integration tests (test/integration) use the real stack. */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // The fault suite (test/load) stops and starts stores and runs minutes: `npm run test:faults` only.
  testPathIgnorePatterns: process.env.MNEMOGRAPH_FAULT_SUITE === '1' ? ['/node_modules/'] : ['/node_modules/', '<rootDir>/test/load/'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  testTimeout: 60000,
};
