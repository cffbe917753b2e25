import { z } from "zod";
import { arg, argsOf, argumentNames, unknownArguments } from "./args.js";

describe("tool arguments", () => {
  it("advertise the argument's JSON Schema but let every value through to the API, which validates it", () => {
    const vote = arg(z.union([z.literal(1), z.literal(-1)]).describe("1 or -1"));
    const shape = argsOf({ vote, note: arg(z.string().max(3).optional()) });
    const json = z.toJSONSchema(shape, { io: "input", target: "draft-7" }) as {
      properties: Record<string, Record<string, unknown>>;
      required: string[];
    };
    expect(json.required).toEqual(["vote"]);
    expect(JSON.stringify(json.properties.vote)).toContain("-1");
    expect(json.properties.vote!.description).toBe("1 or -1");
    expect(json.properties.note!.maxLength).toBe(3);
    expect(shape.safeParse({ vote: 2, note: "too long" }).success).toBe(true);
    expect(shape.safeParse({}).success).toBe(true); // a missing argument reaches the API, which names it
  });

  it("an API detail names the tool's snake_case arguments, not the HTTP names", () => {
    expect(argumentNames("`parentId`: a comment id (c_ + ULID)")).toBe("`parent_id`: a comment id (c_ + ULID)");
    expect(argumentNames("query parameter `limit` must be at most 100")).toBe("`limit` must be at most 100");
    expect(argumentNames("`vote`: must be 1 or -1; `isArchDesign` differs")).toBe(
      "`vote`: must be 1 or -1; `is_arch_design` differs",
    );
    expect(argumentNames("unknown value `p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W`")).toBe(
      "unknown value `p_01JD3Z6Q9V8XKJ4M2N5P7R9T0W`",
    );
  });
});

describe("unknown arguments", () => {
  it("are named, with the snake_case argument of the same words, instead of being dropped", () => {
    const shape = argsOf({ post_id: arg(z.string()), parent_id: arg(z.string().optional()) });
    expect(unknownArguments(shape, { post_id: "p", parent_id: "c" })).toBeUndefined();
    expect(unknownArguments(shape, { post_id: "p", parentId: "c" })).toBe(
      'unknown argument "parentId": arguments are snake_case, send `parent_id`',
    );
    expect(unknownArguments(shape, { postid: "p", x: 1 })).toMatch(
      /^unknown argument "postid".*`post_id`; unknown argument "x" \(known: post_id, parent_id\)$/,
    );
    const json = z.toJSONSchema(shape, { io: "input", target: "draft-7" }) as { additionalProperties?: unknown };
    expect(json.additionalProperties).toBe(false);
  });
});
