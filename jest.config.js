/**
 * One jest run over every workspace (`npm test`): unit tests beside the code
 * (packages/*\/src/**\/*.test.ts, services/*\/src/**\/*.test.ts) and cross-service tests in test/. TypeScript is compiled by
 * @swc/jest to ESM; workspace packages resolve to their built dist (npm test builds first).
 * @type {import('jest').Config}
 */
export default {
  testEnvironment: "node",
  testMatch: [
    "<rootDir>/packages/*/src/**/*.test.ts",
    "<rootDir>/services/*/src/**/*.test.ts",
    "<rootDir>/test/**/*.test.ts",
  ],
  extensionsToTreatAsEsm: [".ts"],
  transform: {
    "^.+\\.ts$": [
      "@swc/jest",
      { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "es6" } },
    ],
  },
  moduleNameMapper: { "^(\\.{1,2}/.*)\\.js$": "$1" },
  testTimeout: 240000,
  // Every request of the suites under test/ is validated against the OpenAPI document (docs/adr/0135).
  setupFilesAfterEnv: ["<rootDir>/test/support/contract.setup.ts"],
  // One test file at a time: the suites start whole systems (several processes and databases
  // each), and two at once on a 2-core machine turn load into timeouts.
  maxWorkers: 1,
  verbose: false,
  reporters: ["default", "<rootDir>/test/support/summary-reporter.cjs"],
  // What a test left open is named after the run (sockets, servers, child processes), and the run
  // then ends: one forgotten handle must not hold CI until its time limit (docs/adr/0138).
  globalTeardown: "<rootDir>/test/support/open-handles.cjs",
  forceExit: true,
};
