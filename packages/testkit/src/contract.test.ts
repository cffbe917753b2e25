import { ContractValidator } from "./contract.js";
import type { HttpResult } from "./http.js";

/** A small OpenAPI 3.1 document in the gateway's style: a $ref'd schema, a required header component, a problem. */
const doc = {
  openapi: "3.1.0",
  paths: {
    "/v1/posts/{id}": {
      get: {
        responses: {
          "200": {
            headers: { "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" } },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Post" } } },
          },
          "304": { headers: { ETag: { schema: { type: "string" } } } },
          "404": {
            content: {
              "application/problem+json": {
                schema: { type: "object", properties: { code: { enum: ["not_found"] } }, required: ["code"] },
              },
            },
          },
        },
      },
    },
    "/v1/posts/translations": {
      get: {
        responses: { "200": { content: { "application/json": { schema: { type: "object", required: ["lang"] } } } } },
      },
    },
  },
  components: {
    headers: { "X-Request-Id": { required: true, schema: { type: "string", minLength: 1 } } },
    schemas: {
      Post: {
        type: "object",
        properties: { id: { type: "string" }, votes: { type: "integer" } },
        required: ["id", "votes"],
        additionalProperties: false,
      },
    },
  },
};

/** An answer with `status`, JSON `body` (or none) and `headers`. */
function answer(
  status: number,
  body?: unknown,
  headers: Record<string, string> = {},
  type = "application/json",
): HttpResult {
  const text = body === undefined ? "" : JSON.stringify(body);
  return {
    status,
    headers: new Headers({ ...(body === undefined ? {} : { "content-type": `${type}; charset=utf-8` }), ...headers }),
    body: body ?? "",
    text,
  };
}

describe("ContractValidator", () => {
  const v = () => new ContractValidator(doc);

  it("accepts an answer the document describes", () => {
    const c = v();
    expect(c.check("GET", "/posts/p_1?x=1", answer(200, { id: "p_1", votes: 2 }, { "x-request-id": "r" }))).toEqual([]);
    expect(c.check("GET", "/posts/p_1", answer(304, undefined))).toEqual([]);
    expect(c.check("GET", "/posts/translations", answer(200, { lang: "en" }))).toEqual([]);
    expect(c.validated).toBe(3);
    expect(c.violations).toEqual([]);
  });

  it("finds an undocumented status, a bad body, a missing header, a wrong media type and an unexpected body", () => {
    const c = v();
    expect(c.check("GET", "/posts/p_1", answer(500, { code: "internal" }, {}, "application/problem+json"))).toEqual([
      "status 500 is not documented for GET /v1/posts/{id}",
    ]);
    expect(
      c.check("GET", "/posts/p_1", answer(200, { id: "p_1", votes: "2", extra: 1 }, { "x-request-id": "r" })).length,
    ).toBe(2);
    expect(c.check("GET", "/posts/p_1", answer(200, { id: "p_1", votes: 2 }))).toEqual([
      "required header X-Request-Id is missing",
    ]);
    expect(c.check("GET", "/posts/p_1", answer(404, { code: "not_found" }))[0]).toMatch(/media type application\/json/);
    expect(c.check("GET", "/posts/p_1", answer(304, { id: "p_1" }))[0]).toMatch(/a body/);
    // literal paths win over templates: /posts/translations is checked as itself
    expect(c.check("GET", "/posts/translations", answer(200, { id: "p_1", votes: 2 }))[0]).toMatch(/lang/);
    expect(c.violations.length).toBe(7);
  });

  it("lets a request without an operation pass only as a 4xx problem document", () => {
    const c = v();
    expect(
      c.check("GET", "/nope", answer(404, { code: "not_found", status: 404 }, {}, "application/problem+json")),
    ).toEqual([]);
    expect(
      c.check("GET", "/nope", answer(404, { code: "not_found", status: 400 }, {}, "application/problem+json"))[0],
    ).toMatch(/no operation GET \/v1\/nope, yet answered 404/);
    expect(c.check("DELETE", "/posts/p_1", answer(200, {}))[0]).toMatch(/no operation DELETE \/v1\/posts\/p_1/);
    expect(c.unmatched).toEqual(["GET /v1/nope", "GET /v1/nope", "DELETE /v1/posts/p_1"]);
  });

  it("checks requests: typed parameters, repeats, credentials, media type and body; a 2xx to a refused one is a violation", () => {
    const c = new ContractValidator({
      paths: {
        "/v1/posts/{id}/vote": {
          post: {
            parameters: [
              { name: "id", in: "path", required: true, schema: { type: "string", pattern: "^p_" } },
              { name: "limit", in: "query", schema: { type: "integer", minimum: 1 } },
            ],
            security: [{ apiKey: [] }],
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: { type: "object", properties: { vote: { enum: [1, -1] } }, required: ["vote"] },
                },
              },
            },
            responses: { "200": {} },
          },
        },
      },
    });
    const json = new Headers({ "content-type": "application/json", authorization: "Bearer k" });
    expect(c.checkRequest("POST", "/posts/p_1/vote?limit=2", { headers: json, body: '{"vote":1}' }, 200)).toEqual([]);
    const bad = (path: string, headers: Headers, body?: string) => c.checkRequest("POST", path, { headers, body }, 400);
    expect(bad("/posts/x_1/vote", json, '{"vote":1}')[0]).toMatch(/path parameter id/);
    expect(bad("/posts/p_1/vote?limit=0", json, '{"vote":1}')[0]).toMatch(/query parameter limit/);
    expect(bad("/posts/p_1/vote?limit=1&limit=2", json, '{"vote":1}')[0]).toMatch(/given 2 times/);
    expect(bad("/posts/p_1/vote", new Headers({ "content-type": "application/json" }), '{"vote":1}')[0]).toMatch(
      /no bearer credentials/,
    );
    expect(bad("/posts/p_1/vote", json)[0]).toMatch(/body is required/);
    expect(
      bad("/posts/p_1/vote", new Headers({ authorization: "Bearer k", "content-type": "text/plain" }), "x")[0],
    ).toMatch(/media type text\/plain/);
    expect(bad("/posts/p_1/vote", json, "{")[0]).toMatch(/not JSON/);
    // a media type named like an Object.prototype key is just unknown (found by the fuzzer)
    expect(
      bad("/posts/p_1/vote", new Headers({ authorization: "Bearer k", "content-type": "constructor" }), "{}")[0],
    ).toMatch(/media type constructor/);
    expect(bad("/posts/p_1/vote", json, '{"vote":2}')[0]).toMatch(/request body\/vote/);
    expect(c.violations).toEqual([]);
    expect(c.requestViolations).toHaveLength(9);
    c.checkRequest("POST", "/posts/p_1/vote", { headers: json, body: '{"vote":3}' }, 200);
    expect(c.violations[0]!.problem).toMatch(/answered 200 to a request the document refuses/);
    expect(c.requestsValidated).toBe(11);
  });

  it("looks a path with one trailing slash up as the gateway's router does (as the path without it)", () => {
    const c = new ContractValidator(doc);
    expect(c.check("GET", "/posts/p_1/", answer(200, { id: "p_1", votes: 2 }, { "X-Request-Id": "r" }))).toEqual([]);
    expect(c.check("GET", "/posts/p_1/", answer(200, { id: "p_1" }, { "X-Request-Id": "r" }))[0]).toMatch(/votes/);
  });

  it("lets a parameter whose schema admits an array repeat, and validates the repeated values as that array", () => {
    const tag = { anyOf: [{ type: "string" }, { type: "array", items: { type: "string", pattern: "^[a-z]+$" } }] };
    const c = new ContractValidator({
      paths: {
        "/v1/posts": { get: { parameters: [{ name: "tag", in: "query", schema: tag }], responses: { "200": {} } } },
      },
    });
    const get = (path: string) => c.checkRequest("GET", path, { headers: new Headers() }, 200);
    expect(get("/posts?tag=a")).toEqual([]);
    expect(get("/posts?tag=a&tag=b")).toEqual([]);
    expect(get("/posts?tag=a&tag=B")[0]).toMatch(/query parameter tag/);
  });
});
