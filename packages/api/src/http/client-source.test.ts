import { abuseSource, clientSource, IPV6_64S_PER_48, isLoopbackOnly } from "./client-source.js";

/** Per-client limits count IPv6 callers per /64, at most IPV6_64S_PER_48 of them per /48 (docs/reliability.md "Abuse", RFC 6177). */
describe("clientSource", () => {
  it("keeps IPv4 addresses, and unwraps IPv4-mapped IPv6", () => {
    expect(clientSource("203.0.113.7")).toBe("203.0.113.7");
    expect(clientSource("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("counts every address of one IPv6 /64 as one source, and other /64s apart", () => {
    const a = clientSource("2001:db8:1:2:aaaa:bbbb:cccc:dddd");
    expect(a).toBe("2001:db8:1:2::/64");
    expect(clientSource("2001:0db8:0001:0002:0000:0000:0000:0001")).toBe(a);
    expect(clientSource("2001:db8:1:2::ffff")).toBe(a);
    expect(clientSource("2001:db8:1:3::1")).not.toBe(a);
    expect(clientSource("::1")).toBe("::/64");
  });

  it("gives one /48 at most IPV6_64S_PER_48 partitions, however many /64s it rotates through", () => {
    const seen = new Set<string>();
    for (let subnet = 0; subnet < 0x10000; subnet += 7) seen.add(clientSource(`2001:db8:1:${subnet.toString(16)}::1`));
    expect(seen.size).toBe(IPV6_64S_PER_48);
    // the first subnets of a /48 keep partitions of their own; another /48 is apart
    expect(clientSource("2001:db8:1:1::1")).not.toBe(clientSource("2001:db8:1:2::1"));
    expect(clientSource("2001:db8:2:1::1")).not.toBe(clientSource("2001:db8:1:1::1"));
  });

  it("passes through what does not parse, and names a missing address", () => {
    expect(clientSource("not-an-ip")).toBe("not-an-ip");
    expect(clientSource(undefined)).toBe("unknown");
  });
});

/** Abuse rules count per source: IPv4 /24, IPv6 /48, loopback per agent (docs/reliability.md "Abuse"). */
describe("abuseSource", () => {
  it("counts one IPv4 /24 as one source, and other /24s apart", () => {
    expect(abuseSource("203.0.113.7")).toBe("203.0.113.0/24");
    expect(abuseSource("203.0.113.200")).toBe(abuseSource("203.0.113.7"));
    expect(abuseSource("::ffff:203.0.113.9")).toBe("203.0.113.0/24");
    expect(abuseSource("203.0.114.7")).not.toBe(abuseSource("203.0.113.7"));
  });

  it("counts one IPv6 /48 as one source: its /64s are one site's (RFC 6177)", () => {
    expect(abuseSource("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1::/48");
    expect(abuseSource("2001:db8:1:3::1")).toBe(abuseSource("2001:db8:1:2::1"));
    expect(abuseSource("2001:db8:1:ffff::1")).toBe(abuseSource("2001:db8:1:2::1"));
    expect(abuseSource("2001:db8:2:2::1")).not.toBe(abuseSource("2001:db8:1:2::1"));
  });

  it("counts a loopback client as one source per agent when the listener is loopback-only (local development)", () => {
    expect(abuseSource("127.0.0.1", "ag_1", true)).toBe("agent:ag_1");
    expect(abuseSource("::1", "ag_2", true)).toBe("agent:ag_2");
    expect(abuseSource("::ffff:127.0.0.1", "ag_3", true)).toBe("agent:ag_3");
    expect(abuseSource("127.0.0.1", undefined, true)).toBe("loopback");
  });

  it("counts every loopback client as one source otherwise (maybe a same-host proxy)", () => {
    for (const a of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
      expect(abuseSource(a, "ag_1")).toBe("loopback");
      expect(abuseSource(a, "ag_2", false)).toBe("loopback");
    }
  });

  it("names a missing or unparsable address without throwing", () => {
    expect(abuseSource(undefined)).toBe("unknown");
    expect(abuseSource("x".repeat(100))).toHaveLength(64);
  });
});

describe("isLoopbackOnly", () => {
  it("is true for localhost, 127.0.0.0/8 and ::1 only", () => {
    for (const h of ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "::1", "[::1]"])
      expect([h, isLoopbackOnly(h)]).toEqual([h, true]);
    for (const h of ["0.0.0.0", "::", "[::]", "10.0.0.1", "192.168.1.2", "example.com", ""])
      expect([h, isLoopbackOnly(h)]).toEqual([h, false]);
  });
});
