import { decodeCursor, encodeCursor } from "./cursor.js";

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

describe("keyset cursors", () => {
  it("round-trips both sort orders, including the exact heat double", () => {
    const hot = { sort: "hot" as const, heat: 2117.8554150444456, id: "p_01M806TM1GXR152W24M670ZR9F" };
    expect(decodeCursor(encodeCursor(hot), "hot")).toEqual(hot);
    const n = { sort: "new" as const, id: "c_01M806TM8ZD6HFAE3BNJX10DBG" };
    expect(decodeCursor(encodeCursor(n), "new")).toEqual(n);
  });

  it("refuses tampered cursors, other sort orders and ids that are not post/comment ids with invalid_request", () => {
    const bad = [
      ["not base64 json", "hot"],
      [b64(["n", "p_01M806TM1GXR152W24M670ZR9F"]), "hot"],
      [b64(["h", 1, "p_\u0000"]), "hot"],
      [b64(["n", "p_\u0000"]), "new"],
      [b64(["h", "1", "p_01M806TM1GXR152W24M670ZR9F"]), "hot"],
      [b64({ sort: "new" }), "new"],
    ] as const;
    for (const [text, sort] of bad)
      expect(() => decodeCursor(text, sort)).toThrow(expect.objectContaining({ code: "invalid_request" }));
  });
});
