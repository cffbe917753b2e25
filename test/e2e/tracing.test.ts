import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { startTelemetry, shutdownTelemetry, type PreloadedModule } from "@aps/platform/telemetry";
import { httpClient } from "@aps/testkit";
import { grantSeat, joinAgent } from "../support/fixtures.js";
import { waitStrictly } from "../support/wait.js";

/**
 * One trace across the system (docs/design/operations.md#at-a-glance): `POST /v1/posts/{id}/vote` that moves a
 * post onto the agenda is traced from the gateway's HTTP server span through the forum's
 * CastVote (client and server spans — in these all-in-one modes made by the in-process transport,
 * docs/design/services.md#in-process-transport, named like the gRPC instrumentation's), its PostgreSQL queries, the outbox relay's PRODUCER span for
 * `forum.post_on_agenda`, to the council's CONSUMER span and what the council does in it — all
 * under one trace id, with the parent/child edges asserted; likewise a Council ballot that closes a
 * case, through `council.case_closed`, to the identity service's Sagacity consumer. No span
 * attribute carries an API key or a request body.
 *
 * The SDK starts in this jest worker before the system is imported (jest's module registry is
 * invisible to the Node loader hooks, so the instrumented modules are handed over to be patched).
 */
const exporter = new InMemorySpanExporter();
const ROOT = new URL("../../", import.meta.url);
function preloaded(name: string, exports: unknown): PreloadedModule {
  const version =
    name === "http"
      ? process.versions.node
      : (JSON.parse(readFileSync(new URL(`node_modules/${name}/package.json`, ROOT), "utf8")) as { version: string })
          .version;
  return { exports, version };
}
// Through require, not import: the patched exports (gRPC's client constructors) must be what the
// system's ESM imports of them see, so no ESM view of these modules may exist before the patch.
const require = createRequire(import.meta.url);
await startTelemetry("aps-test", {
  spanProcessors: [new SimpleSpanProcessor(exporter)],
  preloaded: {
    http: preloaded("http", require("node:http")),
    express: preloaded("express", require("express")),
    "@grpc/grpc-js": preloaded("@grpc/grpc-js", require("@grpc/grpc-js")),
    pg: preloaded("pg", require("pg")),
    "pg-pool": preloaded("pg-pool", require("pg-pool")),
  },
});
const { availableModes, startSystem } = await import("../support/system.js");
const { waitForSettled } = await import("../support/settle.js");

const modes = (await availableModes()).filter((m) => m === "embedded" || m === "real");
const SECRET_BODY = "plugh-secret-body-text";

afterAll(async () => {
  await shutdownTelemetry();
});

const scope = (s: ReadableSpan) => s.instrumentationScope.name;
/** Scope of the spans of a service call in these all-in-one modes (the in-process transport, docs/design/services.md#in-process-transport). */
const LOCAL_TRANSPORT = "@aps/platform/local-transport";
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
const idOf = (s: ReadableSpan) => s.spanContext().spanId;

describe.each(modes)("tracing (%s)", (mode) => {
  it("one trace: gateway → forum call → PostgreSQL → publish → council consumer; no keys or bodies", async () => {
    const sys = await startSystem(mode, {
      env: { AGENDA_MIN_SCORE: "1", AGENDA_SIZE: "10", JOINS_PER_SOURCE_PER_DAY: "10000" },
    });
    try {
      const req = httpClient(sys.baseUrl);
      const author = await req("POST", "/join", { body: { name: "trace author" } });
      const voter = await req("POST", "/join", { body: { name: "trace voter" } });
      expect(voter.status).toBe(201);
      const post = await req("POST", "/posts", {
        key: author.body.apiKey,
        body: { title: "Traced proposal", body: SECRET_BODY, is_arch_design: true },
      });
      expect(post.status).toBe(201);
      const postId = post.body.id as string;
      exporter.reset();

      const vote = await req("POST", `/posts/${postId}/vote`, { key: voter.body.apiKey, body: { vote: 1 } });
      expect(vote.status).toBeLessThan(300);

      // The vote's HTTP server span.
      const server = await waitFor(() =>
        exporter
          .getFinishedSpans()
          .find(
            (s) =>
              s.kind === SpanKind.SERVER &&
              scope(s).endsWith("instrumentation-http") &&
              String(
                s.attributes["http.route"] ?? s.attributes["http.target"] ?? s.attributes["url.path"] ?? s.name,
              ).includes("vote"),
          ),
      );
      const traceId = server.spanContext().traceId;
      const inTrace = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      const consumer = await waitFor(() =>
        inTrace().find(
          (s) =>
            s.kind === SpanKind.CONSUMER &&
            s.name.endsWith("forum.post_on_agenda process") &&
            s.attributes["messaging.consumer.group.name"] === "council-agenda",
        ),
      );
      // The council's work inside the consumer span (a call to identity, its PostgreSQL queries).
      await waitFor(() => {
        const t = inTrace();
        const child = (kind: SpanKind) => t.some((s) => s.kind === kind && parentOf(s) === idOf(consumer));
        return (
          (child(SpanKind.CLIENT) &&
            t.some((s) => scope(s).endsWith("instrumentation-pg") && parentOf(s) === idOf(consumer))) ||
          undefined
        );
      });
      // The producer span ends after its consumers (see the ballot test below): wait for it too.
      await waitFor(() =>
        inTrace().find((s) => s.kind === SpanKind.PRODUCER && s.name.endsWith("forum.post_on_agenda publish")),
      );
      const spans = inTrace();
      const byId = new Map(spans.map((s) => [idOf(s), s]));
      const ancestors = (s: ReadableSpan): ReadableSpan[] => {
        const out: ReadableSpan[] = [];
        for (let p = byId.get(parentOf(s) ?? ""); p; p = byId.get(parentOf(p) ?? "")) out.push(p);
        return out;
      };

      expect(parentOf(server)).toBeUndefined();
      // CastVote: a client span under the HTTP request and the forum's server span under it.
      const castClient = spans.find((s) => s.kind === SpanKind.CLIENT && s.name.includes("ForumService/CastVote"));
      const castServer = spans.find((s) => s.kind === SpanKind.SERVER && s.name.includes("ForumService/CastVote"));
      expect(castClient).toBeDefined();
      expect(castServer).toBeDefined();
      // In-process (the all-in-one calls its services without gRPC), with the RPC attributes.
      expect(scope(castClient!)).toBe(LOCAL_TRANSPORT);
      expect(castClient!.attributes).toMatchObject({
        "rpc.system": "aps_local",
        "rpc.service": "aps.forum.v1.ForumService",
        "rpc.method": "CastVote",
        "rpc.grpc.status_code": 0,
      });
      expect(spans.some((s) => scope(s).endsWith("instrumentation-grpc"))).toBe(false);
      expect(ancestors(castClient!)).toContain(server);
      expect(parentOf(castServer!)).toBe(idOf(castClient!));
      // PostgreSQL queries of the forum under its server span.
      const forumQueries = spans.filter(
        (s) => scope(s).endsWith("instrumentation-pg") && ancestors(s).includes(castServer!),
      );
      expect(forumQueries.length).toBeGreaterThan(0);
      // The relay's publish, parented to the context captured when the event was enqueued.
      const producer = spans.find(
        (s) => s.kind === SpanKind.PRODUCER && s.name.endsWith("forum.post_on_agenda publish"),
      );
      expect(producer).toBeDefined();
      expect(ancestors(producer!)).toContain(castServer!);
      expect(producer!.attributes["messaging.system"]).toBe("nats");
      // The council's consumer, a child of the publish.
      expect(parentOf(consumer)).toBe(idOf(producer!));
      expect(consumer.attributes).toMatchObject({
        "messaging.system": "nats",
        "messaging.destination.name": producer!.attributes["messaging.destination.name"],
        "messaging.message.id": producer!.attributes["messaging.message.id"],
        "messaging.consumer.group.name": "council-agenda",
      });
      const councilWork = spans.filter((s) => ancestors(s).includes(consumer));
      expect(councilWork.some((s) => scope(s).endsWith("instrumentation-pg"))).toBe(true);
      expect(councilWork.some((s) => s.kind === SpanKind.CLIENT && scope(s) === LOCAL_TRANSPORT)).toBe(true);

      // Never a key or a body, in any span of any trace.
      const everything = JSON.stringify(
        exporter.getFinishedSpans().map((s) => [s.name, s.attributes, s.events.map((e) => e.attributes), s.status]),
      );
      for (const secret of [author.body.apiKey as string, voter.body.apiKey as string, SECRET_BODY, '"vote":1'])
        expect(everything).not.toContain(secret);
    } finally {
      await sys.stop();
    }
  });

  it("votes sent together (CastVotes, docs/design/votes-and-heat.md#gateway-batching): each vote's event still joins its own request's trace", async () => {
    const sys = await startSystem(mode, { env: { AGENDA_MIN_SCORE: "1000", JOINS_PER_SOURCE_PER_DAY: "10000" } });
    try {
      const req = httpClient(sys.baseUrl);
      const voters = await Promise.all(Array.from({ length: 30 }, (_, i) => joinAgent(sys, `batch voter ${i}`)));
      const post = await req("POST", "/posts", {
        key: voters[0]!.apiKey,
        body: { title: "Voted at once", body: SECRET_BODY, is_arch_design: true },
      });
      expect(post.status).toBe(201);
      exporter.reset();
      const votes = await Promise.all(
        voters.map((v) => req("POST", `/posts/${post.body.id}/vote`, { key: v.apiKey, body: { vote: 1 } })),
      );
      expect(votes.map((v) => v.status)).toEqual(voters.map(() => 200));
      const isVoteServer = (s: ReadableSpan) =>
        s.kind === SpanKind.SERVER &&
        scope(s).endsWith("instrumentation-http") &&
        String(s.attributes["http.route"] ?? s.attributes["url.path"] ?? s.name).includes("vote");
      const servers = await waitFor(() => {
        const found = exporter.getFinishedSpans().filter(isVoteServer);
        return found.length === voters.length ? found : undefined;
      });
      // the gateway sent some of them together
      expect(
        exporter
          .getFinishedSpans()
          .some((s) => s.kind === SpanKind.CLIENT && s.name.includes("ForumService/CastVotes")),
      ).toBe(true);
      // every request's trace holds the publish of its own vote's forum.vote_cast
      await waitFor(() => {
        const spans = exporter.getFinishedSpans();
        return (
          servers.every((server) =>
            spans.some(
              (s) =>
                s.kind === SpanKind.PRODUCER &&
                s.name.endsWith("forum.vote_cast publish") &&
                s.spanContext().traceId === server.spanContext().traceId,
            ),
          ) || undefined
        );
      });
    } finally {
      await sys.stop();
    }
  });

  it("one trace: a Council ballot that closes the case → case_closed publish → identity's Sagacity consumer", async () => {
    const sys = await startSystem(mode, { env: { AGENDA_MIN_SCORE: "1000", JOINS_PER_SOURCE_PER_DAY: "10000" } });
    try {
      const req = httpClient(sys.baseUrl);
      const [chief, c1, c2, author] = [
        await joinAgent(sys, "chief"),
        await joinAgent(sys, "c1"),
        await joinAgent(sys, "c2"),
        await joinAgent(sys, "author"),
      ];
      await grantSeat(sys, chief, "chief");
      await grantSeat(sys, c1, "councillor");
      await grantSeat(sys, c2, "councillor");
      const post = await req("POST", "/posts", {
        key: author.apiKey,
        body: { title: "Close me", body: SECRET_BODY, is_arch_design: true },
      });
      expect((await req("POST", `/posts/${post.body.id}/nominate`, { key: c1.apiKey })).status).toBe(200);
      exporter.reset();

      const close = await req("POST", `/posts/${post.body.id}/council`, {
        key: c2.apiKey,
        body: { vote: "approve", reason: "Clear need." },
      });
      expect(close.body).toMatchObject({ status: "adopted" });

      const server = await waitFor(() =>
        exporter
          .getFinishedSpans()
          .find(
            (s) =>
              s.kind === SpanKind.SERVER && scope(s).endsWith("instrumentation-http") && s.name.includes("/council"),
          ),
      );
      const traceId = server.spanContext().traceId;
      const inTrace = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
      const consumer = await waitFor(() =>
        inTrace().find(
          (s) =>
            s.kind === SpanKind.CONSUMER &&
            s.name.endsWith("council.case_closed process") &&
            s.attributes["messaging.consumer.group.name"] === "identity-sagacity",
        ),
      );
      await waitFor(
        () =>
          inTrace().some((s) => scope(s).endsWith("instrumentation-pg") && parentOf(s) === idOf(consumer)) || undefined,
      );
      // The in-process bus resolves a publish once its consumers have handled the event, so the
      // producer span ends after the consumer span: wait for it as well (a race under load).
      await waitFor(() =>
        inTrace().find((s) => s.kind === SpanKind.PRODUCER && s.name.endsWith("council.case_closed publish")),
      );
      const spans = inTrace();
      const byId = new Map(spans.map((s) => [idOf(s), s]));
      const ancestors = (s: ReadableSpan): ReadableSpan[] => {
        const out: ReadableSpan[] = [];
        for (let p = byId.get(parentOf(s) ?? ""); p; p = byId.get(parentOf(p) ?? "")) out.push(p);
        return out;
      };
      const councilServer = spans.find(
        (s) => s.kind === SpanKind.SERVER && s.name.includes("aps.council.v1.CouncilService/"),
      );
      expect(councilServer).toBeDefined();
      const councilClient = byId.get(parentOf(councilServer!) ?? "");
      expect(councilClient?.kind).toBe(SpanKind.CLIENT);
      expect(ancestors(councilClient!)).toContain(server);
      const producer = spans.find(
        (s) => s.kind === SpanKind.PRODUCER && s.name.endsWith("council.case_closed publish"),
      );
      expect(producer).toBeDefined();
      expect(ancestors(producer!)).toContain(councilServer!);
      expect(parentOf(consumer)).toBe(idOf(producer!));
      const everything = JSON.stringify(
        exporter.getFinishedSpans().map((s) => [s.name, s.attributes, s.events.map((e) => e.attributes), s.status]),
      );
      for (const secret of [c2.apiKey, author.apiKey, SECRET_BODY, "Clear need."])
        expect(everything).not.toContain(secret);
    } finally {
      await sys.stop();
    }
  });

  it("a cached anonymous read answered before routing keeps its route on the HTTP span (docs/design/edge.md#read-cache-shortcut)", async () => {
    const sys = await startSystem(mode);
    try {
      const req = httpClient(sys.baseUrl);
      const author = await req("POST", "/join", { body: { name: "trace reader" } });
      expect(
        (
          await req("POST", "/posts", {
            key: author.body.apiKey,
            body: { title: "Cached proposal", body: "A proposal read twice.", is_arch_design: true },
          })
        ).status,
      ).toBe(201);
      const serverSpans = () =>
        exporter
          .getFinishedSpans()
          .filter(
            (s) =>
              s.kind === SpanKind.SERVER &&
              scope(s).endsWith("instrumentation-http") &&
              String(s.attributes["url.path"] ?? String(s.attributes["http.target"]).split("?")[0]) === "/v1/posts" &&
              (s.attributes["http.request.method"] ?? s.attributes["http.method"]) === "GET",
          );
      // the post's own event drops the cached lists when it arrives: wait until it was published and
      // every consumer has handled it (the gateway's cache subscription gets it as it is published)
      await waitForSettled(sys);
      exporter.reset();
      for (let i = 0; i < 2; i++) expect((await req("GET", "/posts?sort=new")).status).toBe(200);
      const [first, second] = await waitFor(() => (serverSpans().length >= 2 ? serverSpans() : undefined));
      const handlers = (span: ReadableSpan) =>
        exporter
          .getFinishedSpans()
          .filter(
            (s) =>
              s.spanContext().traceId === span.spanContext().traceId &&
              scope(s).endsWith("instrumentation-express") &&
              s.name.startsWith("request handler"),
          ).length;
      // the first through its route, the second from the shortcut: no route handler, same route
      expect(handlers(first!)).toBeGreaterThan(0);
      expect(handlers(second!)).toBe(0);
      expect(first!.attributes["http.route"]).toBe("/v1/posts");
      expect(second!.attributes["http.route"]).toBe("/v1/posts");
    } finally {
      await sys.stop();
    }
  });
});

/** Waits (≤ `ms`, stretched on a loaded machine) until `probe` finds the spans it looks for; names the spans there are when it times out. */
async function waitFor<T>(probe: () => T | undefined, ms = 15_000): Promise<NonNullable<T>> {
  return waitStrictly("spans", probe, {
    timeoutMs: ms,
    intervalMs: 50,
    show: () =>
      exporter
        .getFinishedSpans()
        .filter((s) => /agenda|CastVote|vote|outbox/i.test(s.name + JSON.stringify(s.attributes)))
        .map(
          (s) =>
            `${s.kind}:${s.name}[${s.spanContext().traceId.slice(0, 6)}/${s.spanContext().spanId.slice(0, 6)}<-${s.parentSpanContext?.spanId.slice(0, 6)}]`,
        )
        .join(", "),
  });
}
