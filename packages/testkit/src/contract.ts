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
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaType>;
}
interface OpenApi {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components?: { headers?: Record<string, HeaderObject> };
}

/** JSON-pointer escaping of one reference token (RFC 6901). */
const esc = (s: string) => s.replace(/~/g, "~0").replace(/\//g, "~1");

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
  /** Answers checked so far. */
  validated = 0;
  /**
   * Requests to a method and path the document has no operation for (a request error in Prism's
   * terms, e.g. a test's deliberate `/nope`): their answer must be a 404 problem.
   */
  readonly unmatched: string[] = [];
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();
  private readonly templates: { method: string; template: string; re: RegExp }[] = [];

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
        const re = new RegExp(
          `^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`,
        );
        this.templates.push({ method: method.toUpperCase(), template, re });
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

  private problemsOf(method: string, path: string, res: HttpResult): string[] {
    const full = this.basePath + path.split("?")[0]!;
    const t = this.templates.find((x) => x.method === method && x.re.test(full));
    if (!t) {
      this.unmatched.push(`${method} ${full}`);
      const problem = /^application\/problem\+json/.test(res.headers.get("content-type") ?? "");
      return res.status === 404 && problem ? [] : [`no operation ${method} ${full}, yet answered ${res.status}`];
    }
    const pointer = `#/paths/${esc(t.template)}/${method.toLowerCase()}/responses`;
    const responses = this.doc.paths[t.template]![method.toLowerCase()]!.responses;
    const key = String(res.status) in responses ? String(res.status) : "default" in responses ? "default" : undefined;
    if (!key) return [`status ${res.status} is not documented for ${method} ${t.template}`];
    const response = responses[key]!;
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
    if (!(type in content)) return [...out, `media type ${type} is not one of ${Object.keys(content).join(", ")}`];
    if (content[type]!.schema === undefined) return out;
    const ref = `openapi${pointer}/${esc(key)}/content/${esc(type)}/schema`;
    let validate = this.compiled.get(ref);
    if (!validate) this.compiled.set(ref, (validate = this.ajv.compile({ $ref: ref })));
    if (!validate(res.body))
      out.push(
        ...(validate.errors ?? []).map(
          (e) => `body${e.instancePath}: ${e.message ?? "invalid"} ${JSON.stringify(e.params)}`,
        ),
      );
    return out;
  }
}
