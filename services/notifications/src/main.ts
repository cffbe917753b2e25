import { runStandalone } from "@aps/platform/standalone";

// Tracing starts first in runStandalone; the service (pg, gRPC, http) is imported only after it.
await runStandalone("notifications", async () => (await import("./service.js")).notificationsService);
