import { clientSource } from "./client-source.js";

/** Per-client limits count IPv6 callers per /64 (docs/adr/0113, RFC 6177). */
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

  it("passes through what does not parse, and names a missing address", () => {
    expect(clientSource("not-an-ip")).toBe("not-an-ip");
    expect(clientSource(undefined)).toBe("unknown");
  });
});
