import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ApiError, apiOrigin, createApsClient, unwrap } from "./index.js";

/**
 * The client's own behaviour against a real HTTP server that answers as the gateway does (a stub
 * gateway: the API itself is exercised by test/e2e/client.test.ts).
 */
describe("createApsClient", () => {
  let url = "";
  const seen: { method: string; url: string; auth?: string; body: string }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
      if (req.url === "/v1/me")
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ agentId: "ext_1" }));
      else
        res.writeHead(404, { "content-type": "application/problem+json" }).end(
          JSON.stringify({
            type: "/docs/errors.md#not_found",
            title: "Not found",
            status: 404,
            detail: "no such post",
            code: "not_found",
            requestId: "r1",
          }),
        );
    });
  });
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("takes APS_URL (…/v1) or the origin as its base", () => {
    expect(apiOrigin("http://h:8080/v1")).toBe("http://h:8080");
    expect(apiOrigin("http://h:8080/v1/")).toBe("http://h:8080");
    expect(apiOrigin("http://h:8080")).toBe("http://h:8080");
  });

  it("sends the bearer token, the path parameters and the JSON body; unwrap returns the data", async () => {
    const client = createApsClient({ baseUrl: `${url}/v1`, token: "sk_src_x" });
    const me = await unwrap(client.GET("/v1/me"));
    expect(me.agentId).toBe("ext_1");
    await client.POST("/v1/posts/{id}/vote", { params: { path: { id: "p_a/b" } }, body: { vote: 1 } });
    expect(seen.at(-1)).toEqual({
      method: "POST",
      url: "/v1/posts/p_a%2Fb/vote",
      auth: "Bearer sk_src_x",
      body: '{"vote":1}',
    });
  });

  it("turns a problem answer into an ApiError carrying the problem", async () => {
    const client = createApsClient({ baseUrl: url });
    const err = await unwrap(client.GET("/v1/posts/{id}", { params: { path: { id: "p_x" } } })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({
      status: 404,
      problem: { code: "not_found" },
      message: "HTTP 404 not_found: no such post",
    });
  });

  it("holds a write's body to the document's fields (a type error for an unknown one) and keeps the answer typed", async () => {
    const client = createApsClient({ baseUrl: url, token: "sk_src_x" });
    const sent = seen.length;
    const post = client.POST("/v1/posts", {
      // @ts-expect-error -- `priority` is no field of POST /posts (the API answers 400): the call does not compile
      body: { title: "t", body: "b", is_arch_design: true, priority: 1 },
    });
    // neither `is_arch_design` nor its alias: the API answers 400, so the call does not compile
    // @ts-expect-error -- is_arch_design (or isArchDesign) is required
    const missing = client.POST("/v1/posts", { body: { title: "t", body: "b" } });
    const alias = client.POST("/v1/posts", { body: { title: "t", body: "b", isArchDesign: false } });
    const vote = await client.POST("/v1/posts/{id}/vote", { params: { path: { id: "p_1" } }, body: { vote: 1 } });
    // the answer stays typed per path: `votes.for` is a number of the VoteResult schema
    const tally: number | undefined = vote.data?.votes.for;
    expect(tally).toBeUndefined(); // the stub answers 404
    await Promise.all([post, missing, alias]);
    // the type check is the test; at run time the body goes as given
    expect(
      seen
        .slice(sent)
        .map((r) => `${r.method} ${r.url}`)
        .sort(),
    ).toEqual(["POST /v1/posts", "POST /v1/posts", "POST /v1/posts", "POST /v1/posts/p_1/vote"]);
  });
});
