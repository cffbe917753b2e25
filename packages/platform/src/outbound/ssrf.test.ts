import { checkTarget, DEFAULT_ALLOWED_PORTS, isPublicAddress, type TargetPolicy } from "./ssrf.js";

const strict: TargetPolicy = { allowPrivate: false, allowedPorts: DEFAULT_ALLOWED_PORTS };
const open: TargetPolicy = { allowPrivate: true, allowedPorts: DEFAULT_ALLOWED_PORTS };

/**
 * The SSRF guard (docs/design/notifications.md#ssrf-guard): the targets are refused without WEBHOOK_ALLOW_PRIVATE,
 * with the system resolver for names (`localhost` resolves to loopback on every machine).
 */
describe("webhook SSRF guard", () => {
  it.each([
    "https://127.0.0.1/h",
    "https://10.0.0.1/h",
    "https://169.254.169.254/latest/meta-data/",
    "https://localhost/h",
    "https://[::1]/h",
    "https://[::ffff:127.0.0.1]/h",
    "https://[fd00:ec2::254]/h",
    "https://100.100.100.200/h",
    "https://192.168.1.10/h",
    "https://172.16.0.1/h",
    "https://0.0.0.0/h",
    // IPv4-compatible IPv6 (::/96, deprecated): ::a9fe:a9fe is 169.254.169.254
    "https://[::a9fe:a9fe]/h",
    "https://[::7f00:1]/h",
    "https://[::0a00:1]/h",
    "https://[100::1]/h", // discard-only, outside 2000::/3
  ])("refuses %s", async (url) => {
    await expect(checkTarget(url, strict)).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("refuses http:, credentials and garbage; accepts a public https address", async () => {
    await expect(checkTarget("http://93.184.216.34/h", strict)).rejects.toThrow(/https/);
    await expect(checkTarget("https://u:p@93.184.216.34/h", strict)).rejects.toThrow(/credentials/);
    await expect(checkTarget("not a url", strict)).rejects.toMatchObject({ code: "invalid_request" });
    const t = await checkTarget("https://93.184.216.34/h", strict);
    expect([t.address, t.family]).toEqual(["93.184.216.34", 4]);
  });

  it("refuses a name when any of its addresses is private (fake resolver: DNS rebinding-style answers)", async () => {
    const resolve = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "10.1.2.3", family: 4 },
    ];
    const refused = checkTarget("https://rebind.example/h", { ...strict, resolve });
    await expect(refused).rejects.toThrow(/non-public/);
    // the refusal names the rule, never the internal address the name resolved to
    await expect(refused).rejects.not.toThrow(/10\.1\.2\.3/);
    const ok = async () => [{ address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 }];
    expect((await checkTarget("https://public.example/h", { ...strict, resolve: ok })).family).toBe(6);
    const compat = async () => [{ address: "::a9fe:a9fe", family: 6 }];
    await expect(checkTarget("https://compat.example/h", { ...strict, resolve: compat })).rejects.toThrow(/non-public/);
  });

  it("answers a name that does not resolve exactly as one that resolves to a private address: no probing of internal names", async () => {
    const nowhere = async (): Promise<{ address: string; family: number }[]> => {
      throw Object.assign(new Error("getaddrinfo ENOTFOUND db.internal"), { code: "ENOTFOUND" });
    };
    const empty = async () => [];
    const internal = async () => [{ address: "10.0.0.7", family: 4 }];
    const messages = await Promise.all(
      [nowhere, empty, internal].map((resolve) =>
        checkTarget("https://db.internal/h", { ...strict, resolve }).then(
          () => "accepted",
          (e: Error) => e.message,
        ),
      ),
    );
    expect(new Set(messages).size).toBe(1);
    expect(messages[0]).toMatch(/^url host db\.internal must resolve to public addresses only/);
  });

  it("refuses ports outside WEBHOOK_ALLOWED_PORTS (443, 80, 8443 by default; the scheme's default when none)", async () => {
    for (const url of ["https://93.184.216.34/h", "https://93.184.216.34:443/h", "https://93.184.216.34:8443/h"])
      expect((await checkTarget(url, strict)).address).toBe("93.184.216.34");
    expect((await checkTarget("https://93.184.216.34:80/h", strict)).address).toBe("93.184.216.34");
    for (const url of ["https://93.184.216.34:22/h", "https://93.184.216.34:6379/h", "https://93.184.216.34:8080/h"])
      await expect(checkTarget(url, strict)).rejects.toMatchObject({ code: "invalid_request", message: /port/ });
    const own: TargetPolicy = { allowPrivate: false, allowedPorts: [9443] };
    expect((await checkTarget("https://93.184.216.34:9443/h", own)).address).toBe("93.184.216.34");
    await expect(checkTarget("https://93.184.216.34/h", own)).rejects.toThrow(/port 443 is not allowed/);
  });

  it("WEBHOOK_ALLOW_PRIVATE allows http, loopback and any port (the tests' local receivers)", async () => {
    const t = await checkTarget("http://localhost:8080/h", open);
    expect(["127.0.0.1", "::1"]).toContain(t.address);
  });

  it("classifies with ipaddr.js ranges", () => {
    expect(isPublicAddress("8.8.8.8")).toBe(true);
    expect(isPublicAddress("2001:4860:4860::8888")).toBe(true);
    for (const ip of [
      "127.0.0.1",
      "10.0.0.1",
      "169.254.169.254",
      "::1",
      "fe80::1",
      "fc00::1",
      "::ffff:10.0.0.1",
      "::a9fe:a9fe",
      "::ffff:169.254.169.254",
      "100::1",
      "nope",
    ])
      expect([ip, isPublicAddress(ip)]).toEqual([ip, false]);
  });
});
