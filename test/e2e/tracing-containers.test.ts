import { containerImagesOrSkip, eventually, httpClient } from "@aps/testkit";
import { startContainerTopology, type ContainerTopology } from "@aps/testkit/containers";
import {
  chartOtelEnv,
  findHttpServerSpan,
  startOtlpReceiver,
  type OtlpReceiver,
  type ReceivedSpan,
} from "../support/otlp-receiver.js";

/**
 * A trace spans every hop of the containerised topology (docs/design/operations.md#the-image): one container per service
 * from the APS image on one Docker network, PostgreSQL and NATS in containers, each service with
 * the OTEL_* env the chart gives it and a real OTLP gRPC receiver in the test (reached from the
 * containers through the engine's `host-gateway`). A vote that puts a post on the agenda must
 * arrive as one trace: gateway HTTP server → gateway gRPC client → forum gRPC server (child of
 * that client, across containers) → forum's `post_on_agenda` publish → council's consumer (child
 * of the publish, across NATS) → council's PostgreSQL queries.
 */
const SUITE = "traces across the containerised topology";
const images = containerImagesOrSkip(SUITE);
const describeImages = images ? describe : describe.skip;

describeImages(images ? SUITE : `SKIPPED (no Docker engine or image here): ${SUITE}`, () => {
  let receiver: OtlpReceiver;
  let topo: ContainerTopology;

  beforeAll(async () => {
    receiver = await startOtlpReceiver("grpc", "0.0.0.0");
    const port = new URL(receiver.endpoint).port;
    topo = await startContainerTopology(
      images!,
      { AGENDA_MIN_SCORE: "1", AGENDA_SIZE: "10", APS_ADMIN_TOKEN: "test-admin-token-0123456789abcdef" },
      {
        envFor: (name) => chartOtelEnv(name, `http://host.docker.internal:${port}`, "grpc"),
        extraHosts: { "host.docker.internal": "host-gateway" },
      },
    );
  }, 300_000);
  afterAll(async () => {
    await topo?.stop();
    await receiver?.stop();
  }, 120_000);

  it("a vote that puts a post on the agenda is one trace from the gateway to the council's queries", async () => {
    const req = httpClient(`${topo.gatewayUrl}/v1`);
    const author = await req("POST", "/join", { body: { name: "container trace author" } });
    const voter = await req("POST", "/join", { body: { name: "container trace voter" } });
    expect(voter.status).toBe(201);
    const post = await req("POST", "/posts", {
      key: author.body.apiKey,
      body: { title: "Traced across containers", body: "one trace, every hop", is_arch_design: true },
    });
    expect(post.status).toBe(201);
    const vote = await req("POST", `/posts/${post.body.id}/vote`, { key: voter.body.apiKey, body: { vote: 1 } });
    expect(vote.status).toBeLessThan(300);

    const byName = (spans: ReceivedSpan[], service: string, kind: string, part: string) =>
      spans.find((s) => s.service === service && s.kind === kind && s.name.includes(part));
    let spans: ReceivedSpan[] = [];
    let server: ReceivedSpan | undefined;
    // Generous ceiling: six containers export on their own batch timers on a 2-core machine.
    await eventually(
      async () => {
        server = findHttpServerSpan(receiver.spans, "aps-gateway", "vote");
        expect(server).toBeDefined();
        spans = receiver.spans.filter((s) => s.traceId === server!.traceId);
        // every span the checks below read: each container exports on its own batch timer, so one
        // service's spans may arrive a batch after another's
        expect(byName(spans, "aps-gateway", "SPAN_KIND_CLIENT", "ForumService/CastVote")).toBeDefined();
        expect(byName(spans, "aps-forum", "SPAN_KIND_SERVER", "ForumService/CastVote")).toBeDefined();
        expect(byName(spans, "aps-forum", "SPAN_KIND_PRODUCER", "post_on_agenda")).toBeDefined();
        expect(byName(spans, "aps-council", "SPAN_KIND_CONSUMER", "post_on_agenda")).toBeDefined();
        expect(spans.some((s) => s.service === "aps-council" && s.scope.endsWith("instrumentation-pg"))).toBe(true);
      },
      90_000,
      250,
    );
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const ancestors = (s: ReceivedSpan): ReceivedSpan[] => {
      const out: ReceivedSpan[] = [];
      for (let p = byId.get(s.parentSpanId); p; p = byId.get(p.parentSpanId)) out.push(p);
      return out;
    };
    const gwClient = byName(spans, "aps-gateway", "SPAN_KIND_CLIENT", "ForumService/CastVote");
    const forumServer = byName(spans, "aps-forum", "SPAN_KIND_SERVER", "ForumService/CastVote");
    const producer = byName(spans, "aps-forum", "SPAN_KIND_PRODUCER", "post_on_agenda");
    const consumer = byName(spans, "aps-council", "SPAN_KIND_CONSUMER", "post_on_agenda");
    expect(server!.parentSpanId).toBe("");
    expect(gwClient && ancestors(gwClient)).toContain(server);
    expect(forumServer?.parentSpanId).toBe(gwClient!.spanId);
    expect(producer && ancestors(producer)).toContain(forumServer);
    expect(consumer?.parentSpanId).toBe(producer!.spanId);
    const councilQueries = spans.filter(
      (s) => s.service === "aps-council" && s.scope.endsWith("instrumentation-pg") && ancestors(s).includes(consumer!),
    );
    expect(councilQueries.length).toBeGreaterThan(0);
    // Spans of three containers in one trace, and no API key in anything that left the containers.
    expect([...new Set(spans.map((s) => s.service))]).toEqual(
      expect.arrayContaining(["aps-gateway", "aps-forum", "aps-council"]),
    );
    expect(JSON.stringify(receiver.spans)).not.toContain(String(author.body.apiKey));
  }, 180_000);
});
