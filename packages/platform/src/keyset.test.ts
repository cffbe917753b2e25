import { decodeTupleCursor, encodeTupleCursor, PG_TIMESTAMPTZ_TEXT } from "./keyset.js";

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

describe("tuple keyset cursors", () => {
  it("round-trips a PostgreSQL timestamptz text and ids", () => {
    const parts = ["2026-11-21 23:43:50.719123+00", "p_01M806TM1GXR152W24M670ZR9F"];
    expect(decodeTupleCursor(encodeTupleCursor(parts), 2, [PG_TIMESTAMPTZ_TEXT])).toEqual(parts);
  });

  it("refuses tampered text, the wrong arity, non-strings, U+0000 and a timestamp PostgreSQL would reject", () => {
    const bad = [
      "%%%",
      b64(["2026-11-21 23:43:50+00"]),
      b64([1, "x"]),
      b64(["2026-11-21 23:43:50+00", "a\u0000"]),
      b64(["not a time", "p_1"]),
      b64(["2026-13-45 99:99:99+00'; --", "p"]),
      b64(["2026-02-31 10:00:00+00", "p"]),
      b64(["2026-11-21 24:00:00+00", "p"]),
    ];
    for (const t of bad)
      expect(() => decodeTupleCursor(t, 2, [PG_TIMESTAMPTZ_TEXT])).toThrow(
        expect.objectContaining({ code: "invalid_request" }),
      );
  });
});
