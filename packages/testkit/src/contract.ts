import { Ajv } from "ajv";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { HttpResult } from "./http.js";

// ajv-formats is CommonJS: its default export is the plugin.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** One disagreement between an answer and the OpenAPI document. */
export interface ContractViolation {
  method: string;
  /** Path as requested (relative to the client's base URL, with the query). */
  path: string;
  status: number;
  problem: string;
}

interface MediaType {
  schema?: unknown;
}
interface HeaderObject {
  $ref?: string;
  required?: boolean;
  schema?: unknown;
}
interface ResponseObject {
  /** A shared response (`#/components/responses/<name>`) in place of the fields below. */
  $ref?: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaType>;
}
interface ParameterObject {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: {
    type?: string | string[];
    anyOf?: { type?: string | string[] }[];
    oneOf?: { type?: string | string[] }[];
  } & Record<string, unknown>;
}
interface OperationObject {
  /** Each inline, or a reference to a shared one (`#/components/parameters/<name>`). */
  parameters?: (ParameterObject | { $ref: string })[];
  requestBody?: { required?: boolean; content?: Record<string, MediaType> };
  security?: Record<string, string[]>[];
  responses: Record<string, ResponseObject>;
}
interface OpenApi {
  paths: Record<string, Record<string, OperationObject>>;
  components?: {
    headers?: Record<string, HeaderObject>;
    responses?: Record<string, ResponseObject>;
    parameters?: Record<string, ParameterObject>;
  };
}

/** A request as the validator sees it: query, headers and the body's text (undefined: none or unreadable). */
export interface RequestSeen {
  headers: Headers;
  body?: string;
}

/** One disagreement between a request and the OpenAPI document (often a test's deliberate bad input). */
export interface RequestViolation {
  method: string;
  path: string;
  /** Status of the answer: a 4xx means the gateway refused it as the document predicts. */
  status: number;
  problem: string;
}

/** JSON-pointer escaping of one reference token (RFC 6901). */
const esc = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * The path an operation is looked up by: the gateway's router (Express, non-strict routing)
 * serves `/v1/me/` as `/v1/me`, so one trailing slash is dropped (a fuzzed `/me/webhooks/..`
 * arrives as `/v1/me/`).
 */
function routePath(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/**
 * Checks HTTP answers against an OpenAPI 3.1 document (response side of a contract test, in the
 * manner of Prism's proxy mode): the operation is found by method and path template, the status
 * must be one the operation documents (or `default`), the media type one of that response's, the
 * body valid against its schema (JSON Schema 2020-12, ajv) and every required header present and
 * valid. `check` returns the problems of one answer and records them in `violations`.
 */
export class ContractValidator {
  /** Every violation found so far. */
  readonly violations: ContractViolation[] = [];
  /** Every request-side violation found so far (see {@link ContractValidator.checkRequest}). */
  readonly requestViolations: RequestViolation[] = [];
  /** Requests checked so far. */
  requestsValidated = 0;
  /** Answers checked so far. */
  validated = 0;
  /**
   * Requests to a method and path the document has no operation for (a request error in Prism's
   * terms, e.g. a test's deliberate `/nope`): their answer must be a 4xx problem document (404, or
   * what a check before routing answers: 400/401/413/415).
   */
  readonly unmatched: string[] = [];
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { method: string; template: string; re: RegExp; names: string[] }[] = [];

  /** `doc`: the OpenAPI document; `basePath`: what the client's base URL adds to a path (e.g. `/v1`). */
  constructor(
    private readonly doc: OpenApi,
    private readonly basePath = "/v1",
  ) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema(doc, "openapi");
    for (const [template, item] of Object.entries(doc.paths))
      for (const method of Object.keys(item)) {
        const names = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
        const re = new RegExp(
          `^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "([^/]+)")}$`,
        );
        this.templates.push({ method: method.toUpperCase(), template, re, names });
      }
    // Literal paths before templated ones: /posts/translations is not /posts/{id}.
    this.templates.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  }

  /** Checks one answer to `method path` (path relative to the base URL); returns its problems. */
  check(method: string, path: string, res: HttpResult): string[] {
    this.validated++;
    const problems = this.problemsOf(method.toUpperCase(), path, res);
    for (const problem of problems) this.violations.push({ method, path, status: res.status, problem });
    return problems;
  }

  /**
   * Checks one request to `method path` (relative to the base URL, with the query) against its
   * operation, in the manner of Prism's request validation: path and query parameters (typed as
   * their schema says, required ones present, none repeated), the `Idempotency-Key`-style header
   * parameters, credentials where the operation's security needs them, and the JSON body (present
   * when required, a documented media type, valid against its schema). `status` is the answer's:
   * a request the document refuses must not be answered 2xx — that is recorded as a response
   * violation (the gateway accepts what its description forbids). A refused one (4xx) is a
   * deliberate bad input of a test, recorded in `requestViolations` only. Returns the problems.
   */
  checkRequest(method: string, path: string, req: RequestSeen, status: number): string[] {
    this.requestsValidated++;
    const problems = this.requestProblemsOf(method.toUpperCase(), path, req);
    for (const problem of problems) this.requestViolations.push({ method, path, status, problem });
    if (problems.length > 0 && status >= 200 && status < 300)
      this.violations.push({
        method,
        path,
        status,
        problem: `answered ${status} to a request the document refuses: ${problems.join("; ")}`,
      });
    return problems;
  }

  private requestProblemsOf(method: string, path: string, req: RequestSeen): string[] {
    const [rawPath, rawQuery = ""] = path.split(/\?(.*)/s) as [string, string?];
    const full = routePath(this.basePath + rawPath);
    const t = this.templates.find((x) => x.method === method && x.re.test(full));
    if (!t) return [];
    const op = this.doc.paths[t.template]![method.toLowerCase()]!;
    const pointer = `openapi#/paths/${esc(t.template)}/${method.toLowerCase()}`;
    const out: string[] = [];
    const match = t.re.exec(full)!;
    const query = new URLSearchParams(rawQuery);
    (op.parameters ?? []).forEach((given, i) => {
      // a shared parameter is a reference to components.parameters (`dryRun`, `idempotencyKey`)
      const shared = "$ref" in given ? given.$ref.split("/").pop()! : undefined;
      const p = shared !== undefined ? this.doc.components?.parameters?.[shared] : (given as ParameterObject);
      if (!p) return;
      const schemaAt =
        shared !== undefined
          ? `openapi#/components/parameters/${esc(shared)}/schema`
          : `${pointer}/parameters/${i}/schema`;
      let values: string[];
      if (p.in === "path") {
        const raw = match[t.names.indexOf(p.name) + 1] ?? "";
        try {
          values = [decodeURIComponent(raw)];
        } catch {
          out.push(`path parameter ${p.name}: not valid percent-encoding`);
          return;
        }
      } else if (p.in === "query") values = query.getAll(p.name);
      else if (p.in === "header") values = req.headers.has(p.name) ? [req.headers.get(p.name)!] : [];
      else return;
      if (values.length === 0) {
        if (p.required) out.push(`${p.in} parameter ${p.name} is required`);
        return;
      }
      const types = [p.schema?.type ?? []].flat();
      // A parameter may repeat when its schema (or one of its anyOf/oneOf alternatives) is an array
      // (form style, explode: `?tag=a&tag=b`); the repeated values are then validated as that array.
      const alternatives = [p.schema, ...(p.schema?.anyOf ?? []), ...(p.schema?.oneOf ?? [])];
      const repeatable = alternatives.some((s) => [s?.type ?? []].flat().includes("array"));
      if (values.length > 1 && !repeatable) {
        out.push(`${p.in} parameter ${p.name} is given ${values.length} times`);
        return;
      }
      const value = values.length > 1 ? values : coerce(values[0]!, types);
      const validate = this.compile(schemaAt);
      if (p.schema && !validate(value))
        out.push(`${p.in} parameter ${p.name}: ${this.ajv.errorsText(validate.errors)}`);
    });
    const security = op.security ?? [];
    if (security.length > 0 && !security.some((s) => Object.keys(s).length === 0)) {
      if (!/^Bearer \S+$/i.test(req.headers.get("authorization") ?? ""))
        out.push(`no bearer credentials for ${Object.keys(security[0]!).join(", ")}`);
    }
    const body = op.requestBody;
    if (!body) return out;
    if (req.body === undefined || req.body === "") {
      if (body.required) out.push("the request body is required");
      return out;
    }
    const type = (req.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    const content = body.content ?? {};
    if (!Object.hasOwn(content, type))
      return [...out, `request media type ${type || "(none)"} is not one of ${Object.keys(content).join(", ")}`];
    let parsed: unknown;
    try {
      parsed = JSON.parse(req.body);
    } catch {
      return [...out, "the request body is not JSON"];
    }
    const validate = this.compile(`${pointer}/requestBody/content/${esc(type)}/schema`);
    if (content[type]!.schema !== undefined && !validate(parsed))
      out.push(
        ...(validate.errors ?? []).map(
          (e) => `request body${e.instancePath}: ${e.message ?? "invalid"} ${JSON.stringify(e.params)}`,
        ),
      );
    return out;
  }

  /** The compiled validator of the schema at `ref` (a JSON pointer into the document). */
  private compile(ref: string): ValidateFunction {
    let validate = this.compiled.get(ref);
    if (!validate) this.compiled.set(ref, (validate = this.ajv.compile({ $ref: ref })));
    return validate;
  }

  private problemsOf(method: string, path: string, res: HttpResult): string[] {
    const full = routePath(this.basePath + path.split("?")[0]!);
    const t = this.templates.find((x) => x.method === method && x.re.test(full));
    if (!t) {
      this.unmatched.push(`${method} ${full}`);
      // No operation: a request error. The gateway's checks that run before routing (media type,
      // size, JSON syntax, the owner's token on /admin/*) may answer first, so any 4xx problem
      // document (its `status` the answer's) conforms; a success or a bare body does not.
      const problem = /^application\/problem\+json/.test(res.headers.get("content-type") ?? "");
      const body = res.body as { status?: unknown; code?: unknown } | undefined;
      const ok =
        res.status >= 400 &&
        res.status < 500 &&
        problem &&
        body?.status === res.status &&
        typeof body.code === "string";
      return ok ? [] : [`no operation ${method} ${full}, yet answered ${res.status}`];
    }
    const responses = this.doc.paths[t.template]![method.toLowerCase()]!.responses;
    // Own keys only: a media type or status such as `constructor` is not on Object.prototype's list.
    const key = Object.hasOwn(responses, String(res.status))
      ? String(res.status)
      : Object.hasOwn(responses, "default")
        ? "default"
        : undefined;
    if (!key) return [`status ${res.status} is not documented for ${method} ${t.template}`];
    // A shared response (`$ref` to components.responses) is read, and its schema compiled, where it lives.
    const ref = responses[key]!.$ref;
    const name = ref?.startsWith("#/components/responses/") ? ref.split("/").pop()! : undefined;
    const response = name ? this.doc.components?.responses?.[name] : responses[key];
    if (!response) return [`${method} ${t.template} ${key}: unresolved response ${ref}`];
    const at = name
      ? `#/components/responses/${esc(name)}`
      : `#/paths/${esc(t.template)}/${method.toLowerCase()}/responses/${esc(key)}`;
    const out: string[] = [];
    for (const [name, h] of Object.entries(response.headers ?? {})) {
      const header = h.$ref ? this.doc.components?.headers?.[h.$ref.split("/").pop()!] : h;
      const value = res.headers.get(name);
      if (value === null) {
        if (header?.required) out.push(`required header ${name} is missing`);
        continue;
      }
      if (header?.schema && !this.ajv.validate(header.schema, value))
        out.push(`header ${name}: ${this.ajv.errorsText(this.ajv.errors)}`);
    }
    const content = response.content ?? {};
    const type = (res.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (Object.keys(content).length === 0) {
      if (res.text !== "") out.push(`a body (${type}) where the document gives none`);
      return out;
    }
    if (!Object.hasOwn(content, type))
      return [...out, `media type ${type} is not one of ${Object.keys(content).join(", ")}`];
    if (content[type]!.schema === undefined) return out;
    const validate = this.compile(`openapi${at}/content/${esc(type)}/schema`);
    if (!validate(res.body))
      out.push(
        ...(validate.errors ?? []).map(
          (e) => `body${e.instancePath}: ${e.message ?? "invalid"} ${JSON.stringify(e.params)}`,
        ),
      );
    return out;
  }
}

/** A query or path value typed as its schema says (what a server's coercion would make of it). */
function coerce(value: string, types: string[]): unknown {
  if ((types.includes("integer") || types.includes("number")) && !types.includes("string"))
    return value.trim() !== "" && Number.isFinite(Number(value)) ? Number(value) : value;
  if (types.includes("boolean") && !types.includes("string"))
    return value === "true" ? true : value === "false" ? false : value;
  return value;
}

/**
 * A check of values against one self-contained JSON Schema (ajv; draft-07 when its `$schema` says
 * so, as the MCP SDK labels tool schemas, else 2020-12; formats checked; unknown keywords such as
 * OpenAPI's `example` ignored): the returned function answers the problems of a value
 * (`/path message`), none when it conforms. For schemas served on their own, such as an MCP
 * tool's `outputSchema` (docs/design/agents.md#mcp-output-schemas). Throws when `schema` does not compile.
 */
export function jsonSchemaCheck(schema: Record<string, unknown>): (value: unknown) => string[] {
  const options = { strict: false, allErrors: true, validateFormats: true };
  const draft07 = typeof schema.$schema === "string" && schema.$schema.includes("draft-07");
  const ajv = draft07 ? new Ajv(options) : new Ajv2020(options);
  addFormats(ajv);
  const validate = ajv.compile(schema);
  return (value) =>
    validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? e.keyword}`);
}
