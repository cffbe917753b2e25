import { createLogger, serviceClient, startGrpcServer, type ForumClient, type RunningGrpcServer } from "@aps/platform";
import { forum } from "@aps/proto";
import type { ForumRepository } from "../store/repository.js";
import { forumHandlers } from "./handlers.js";

/**
 * Test fixture (not built into dist): the forum's gRPC handlers on `repo`, served by a real
 * grpc-js server on a loopback port, with a client over the network (`viaGrpc`) and one through
 * the server's in-process endpoint (`viaLocal`, as the all-in-one calls it). `close()` closes both
 * clients and stops the server (1 s grace); the store stays the caller's.
 */
export interface ForumGrpcFixture {
  server: RunningGrpcServer;
  viaGrpc: ForumClient;
  viaLocal: ForumClient;
  close(): Promise<void>;
}

/** Starts the fixture's server on `repo`; `name` names its (silent) logger. */
export async function forumGrpcFixture(name: string, repo: ForumRepository): Promise<ForumGrpcFixture> {
  const log = createLogger(name, "silent");
  const handlers = forumHandlers(repo, log);
  const server = await startGrpcServer(
    "127.0.0.1:0",
    [{ name: forum.ForumServiceDefinition.fullName, definition: forum.ForumServiceService, implementation: handlers }],
    log,
  );
  const viaGrpc = serviceClient(forum.ForumServiceDefinition, `127.0.0.1:${server.port}`);
  const viaLocal = serviceClient(forum.ForumServiceDefinition, server.local(forum.ForumServiceDefinition, handlers));
  return {
    server,
    viaGrpc,
    viaLocal,
    close: async () => {
      viaGrpc.close();
      viaLocal.close();
      await server.shutdown(1_000);
    },
  };
}
