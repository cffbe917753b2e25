import { checkTarget, isPublicAddress } from "./ssrf.js";

/**
 * The SSRF guard (docs/adr/0127): the targets are refused without WEBHOOK_ALLOW_PRIVATE,
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
  ])("refuses %s", async (url) => {
    await expect(checkTarget(url, false)).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("refuses http:, credentials and garbage; accepts a public https address", async () => {
    await expect(checkTarget("http://93.184.216.34/h", false)).rejects.toThrow(/https/);
    await expect(checkTarget("https://u:p@93.184.216.34/h", false)).rejects.toThrow(/credentials/);
    await expect(checkTarget("not a url", false)).rejects.toMatchObject({ code: "invalid_request" });
    const t = await checkTarget("https://93.184.216.34/h", false);
    expect([t.address, t.family]).toEqual(["93.184.216.34", 4]);
  });

  it("refuses a name when any of its addresses is private (fake resolver: DNS rebinding-style answers)", async () => {
    const resolve = async () => [
      { address: "93.184.216.34", family: 4 },
      { address: "10.1.2.3", family: 4 },
    ];
    await expect(checkTarget("https://rebind.example/h", false, resolve)).rejects.toThrow(/10\.1\.2\.3/);
    const ok = async () => [{ address: "2606:2800:220:1:248:1893:25c8:1946", family: 6 }];
    expect((await checkTarget("https://public.example/h", false, ok)).family).toBe(6);
  });

  it("WEBHOOK_ALLOW_PRIVATE allows http and loopback", async () => {
    const t = await checkTarget("http://localhost:8080/h", true);
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
      "nope",
    ])
      expect([ip, isPublicAddress(ip)]).toEqual([ip, false]);
  });
});
