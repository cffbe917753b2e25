/** @aps/testkit — shared test fixtures: real PostgreSQL/NATS discovery, processes, HTTP. */
export * from "./infra.js";
export * from "./process.js";
export * from "./build.js";
export * from "./http.js";
export * from "./contract.js";
export * from "./contract-fetch.js";
export * from "./clock.js";
export * from "./private.js";
export * from "./wait.js";
export * from "./tcp-proxy.js";
export * from "./datasets.js";
// Container systems (testcontainers) are `@aps/testkit/containers`, loaded only by the suites that start them.
export * from "./images.js";
