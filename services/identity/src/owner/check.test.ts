import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { DEFAULT_ALLOWED_PORTS } from "@aps/platform";
import { scaled } from "@aps/testkit";
import { checkOwner, namedAgents, OWNER_FILE_MAX_BYTES, wellKnownUrlOf } from "./check.js";

/**
 * The owner check (docs/design/notifications.md#verified-owners): the owner file's shape, where it is fetched from, and every
 * reason a check fails, against a real server on loopback (allowPrivate, as WEBHOOK_ALLOW_PRIVATE)
 * and the strict SSRF rules.
 */
const ID = "ext_01JD3Z6Q9V8XKJ4M2N5P7R9T0W";
const OTHER = "ext_01JWN82D00JXETPH8GM57FA7S8";
// the deadline of a loopback exchange that answers at once (or, for `timeout`, never): stretched on a loaded machine
const open = { policy: { allowPrivate: true, allowedPorts: DEFAULT_ALLOWED_PORTS }, deadlineMs: scaled(300) };
const strict = { policy: { allowPrivate: false, allowedPorts: DEFAULT_ALLOWED_PORTS }, deadlineMs: scaled(300) };

describe("owner file", () => {
  it("names agents by `agentId` and/or `agents`; anything else is not an owner file", () => {
    expect(namedAgents(Buffer.from(JSON.stringify({ agentId: ID })))).toEqual([ID]);
    expect(namedAgents(Buffer.from(JSON.stringify({ agentId: ID, agents: [OTHER] })))).toEqual([ID, OTHER]);
    expect(namedAgents(Buffer.from(JSON.stringify({ agents: [OTHER] })))).toEqual([OTHER]);
    for (const bad of ["[]", "null", '"x"', "{}", '{"agentId":1}', '{"agents":[1]}', '{"agents":"x"}', "{not json"])
      expect([bad, namedAgents(Buffer.from(bad))]).toEqual([bad, undefined]);
  });
  it("is fetched from the url's origin at /.well-known/aps-agent.json", () => {
    expect(wellKnownUrlOf("https://Example.COM:8443/a/b?c#d")?.href).toBe(
      "https://example.com:8443/.well-known/aps-agent.json",
    );
    expect(wellKnownUrlOf("nonsense")).toBeUndefined();
  });
});

describe("checkOwner against a loopback server", () => {
  let server: Server;
  let base: string;
  let answer: (res: import("node:http").ServerResponse) => void = (res) => res.writeHead(404).end();
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/.well-known/aps-agent.json") answer(res);
      else res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/profile`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const json = (doc: unknown) => (res: import("node:http").ServerResponse) =>
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(doc));

  it("verifies a file naming the agent, with the host as the domain", async () => {
    answer = json({ agents: [OTHER, ID] });
    expect(await checkOwner(ID, base, open)).toEqual({
      verified: true,
      domain: "127.0.0.1",
      wellKnownUrl: base.replace("/profile", "/.well-known/aps-agent.json"),
    });
  });
  it.each<[string, (res: import("node:http").ServerResponse) => void]>([
    ["wrong_agent", json({ agentId: OTHER })],
    ["not_found", (res) => res.writeHead(404).end()],
    ["not_found", (res) => res.writeHead(410).end()],
    ["http_status", (res) => res.writeHead(302, { location: "https://elsewhere.example/" }).end()],
    ["http_status", (res) => res.writeHead(500).end()],
    ["invalid_document", (res) => res.writeHead(200).end("<html>")],
    [
      "too_large",
      (res) => res.writeHead(200).end(JSON.stringify({ agentId: ID, pad: "x".repeat(OWNER_FILE_MAX_BYTES) })),
    ],
    ["timeout", () => undefined],
  ])("fails with %s", async (reason, a) => {
    answer = a;
    const r = await checkOwner(ID, base, open);
    expect(r).toMatchObject({ verified: false, reason });
  });
  it("fails with no_url without a url, and unreachable when nothing listens", async () => {
    expect(await checkOwner(ID, "", open)).toMatchObject({ verified: false, reason: "no_url" });
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    expect(await checkOwner(ID, `http://127.0.0.1:${port}/`, open)).toMatchObject({ reason: "unreachable" });
  });
  it("refuses with the strict rules, fetching nothing: http, loopback, ports", async () => {
    let hits = 0;
    answer = (res) => {
      hits++;
      json({ agentId: ID })(res);
    };
    expect(await checkOwner(ID, base, strict)).toMatchObject({ reason: "not_https" });
    expect(await checkOwner(ID, "https://127.0.0.1/p", strict)).toMatchObject({ reason: "no_public_address" });
    expect(await checkOwner(ID, "https://[::1]/p", strict)).toMatchObject({ reason: "no_public_address" });
    expect(await checkOwner(ID, "https://93.184.216.34:22/p", strict)).toMatchObject({ reason: "port_not_allowed" });
    const hidden = await checkOwner(ID, "https://localhost/p", strict);
    expect(hidden).toMatchObject({ reason: "no_public_address" });
    if (!hidden.verified) expect(hidden.detail).not.toMatch(/127\.0\.0\.1|::1/);
    expect(hits).toBe(0);
  });
});
