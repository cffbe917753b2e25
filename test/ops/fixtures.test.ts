/**
 * Guards the one set of test fixtures (test/support/fixtures.ts, docs/design/tests.md#domain-fixtures): agents are joined
 * and seated by `joinAgent`, `joinAgents`, `grantSeat`, `revokeSeat` and `seatCouncil`, not by a
 * helper of each file. `join()` had been written out in ~16 files and `seat()` in ~6, each with
 * its own shape and its own status check; this test reads the TypeScript sources under test/ and
 * fails when one defines such a helper again:
 * - a function named `join` or `seat` (declared, or a const or property initialised with a function), or
 * - a named function (declared, or a const initialised with a function) that sends a join (`/join`)
 *   or seat (`/admin/seats`) request itself.
 * Raw requests inside a test's own callbacks (`it`, `describe`, the hooks) stay allowed: a test may
 * check the raw HTTP of those routes on purpose. The few helpers allowed to stay are listed in EXEMPT, each with its reason;
 * an exemption whose helper is gone fails too, so the list only shrinks.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join as joinPath } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The one place the helpers live, and this guard (whose own sources name the routes). */
const OWNERS = ["test/support/fixtures.ts", "test/ops/fixtures.test.ts"];

/** Helpers allowed to stay, by file and helper name, each with its reason. */
const EXEMPT: { file: string; helper: string; why: string }[] = [
  {
    file: "test/e2e/bad-input.test.ts",
    helper: "join",
    why: "builds the malformed POST /join requests the suite sends raw on purpose (a case builder beside post, comment, vote)",
  },
  {
    file: "test/abuse/revocation.test.ts",
    helper: "join",
    why: "retries a POST /join raw with the Idempotency-Key of an earlier join: the replay (and its refusal after a revocation) is what the suite tests",
  },
];

/** One helper found: where, its name, and why it counts as a copy. */
interface Copy {
  file: string;
  line: number;
  helper: string;
  why: string;
}

/** The request paths of the copies: `/join` (optionally `/v1/join`) and `/admin/seats…`. */
const JOIN_PATH = /(^|\/v1|\})\/join$/;
const SEAT_PATH = /(^|\/v1|\})\/admin\/seats(\/|$)/;
const COPY_NAMES = new Set(["join", "seat"]);

/** The text of a string or template literal, with `}` standing for each substitution. */
function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((s) => "}" + s.literal.text).join("");
  return undefined;
}

/** Calls that define tests or their hooks: what runs inside them is a test's own code, not a helper's. */
const JEST_BLOCK = /\b(describe|it|test|beforeAll|beforeEach|afterAll|afterEach)\b/;

/** The join or seat route a function's body sends a request to, if any (not counting the tests it defines). */
function routeIn(body: ts.Node): string | undefined {
  let found: string | undefined;
  const visit = (n: ts.Node): void => {
    if (found) return;
    if (ts.isCallExpression(n) && JEST_BLOCK.test(n.expression.getText())) return;
    const text = literalText(n);
    if (text !== undefined && (JOIN_PATH.test(text) || SEAT_PATH.test(text))) found = text;
    else ts.forEachChild(n, visit);
  };
  visit(body);
  return found;
}

/**
 * The named functions of a source: declarations and methods, consts initialised with a function,
 * and properties initialised with one (`property`: a table's `send: (c) => …` is a test case, so
 * only its name counts).
 */
function namedFunctions(sf: ts.SourceFile): { name: string; node: ts.Node; property?: true }[] {
  const out: { name: string; node: ts.Node; property?: true }[] = [];
  const isFn = (n: ts.Node | undefined): n is ts.ArrowFunction | ts.FunctionExpression =>
    !!n && (ts.isArrowFunction(n) || ts.isFunctionExpression(n));
  const visit = (n: ts.Node): void => {
    if (ts.isFunctionDeclaration(n) && n.name) out.push({ name: n.name.text, node: n });
    else if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && isFn(n.initializer))
      out.push({ name: n.name.text, node: n });
    else if (ts.isPropertyAssignment(n) && ts.isIdentifier(n.name) && isFn(n.initializer))
      out.push({ name: n.name.text, node: n, property: true });
    else if (ts.isMethodDeclaration(n) && ts.isIdentifier(n.name)) out.push({ name: n.name.text, node: n });
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

/** The join/seat helpers `source` (the text of `file`) defines. */
export function copiesIn(file: string, source: string): Copy[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const copies: Copy[] = [];
  for (const { name, node, property } of namedFunctions(sf)) {
    const route = property ? undefined : routeIn(node);
    const why = COPY_NAMES.has(name)
      ? `a helper named ${name}`
      : route !== undefined
        ? `sends ${JSON.stringify(route)} itself`
        : undefined;
    if (why) copies.push({ file, line: sf.getLineAndCharacterOfPosition(node.getStart()).line + 1, helper: name, why });
  }
  return copies;
}

/** Every TypeScript source under test/, relative to the repository root. */
function testSources(dir = "test"): string[] {
  return readdirSync(joinPath(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.name === "node_modules" || e.name === "artifacts" || e.name === "results"
      ? []
      : e.isDirectory()
        ? testSources(`${dir}/${e.name}`)
        : e.name.endsWith(".ts")
          ? [`${dir}/${e.name}`]
          : [],
  );
}

const exempt = (c: Copy) => EXEMPT.some((e) => e.file === c.file && e.helper === c.helper);

describe("one set of test fixtures (docs/design/tests.md#domain-fixtures)", () => {
  const found = testSources()
    .filter((f) => !OWNERS.includes(f))
    .flatMap((f) => copiesIn(f, readFileSync(joinPath(ROOT, f), "utf8")));

  it("no file under test/ defines its own join or seat helper: test/support/fixtures.ts makes and seats agents", () => {
    const copies = found.filter((c) => !exempt(c)).map((c) => `${c.file}:${c.line} ${c.helper}: ${c.why}`);
    if (copies.length > 0)
      console.error(
        `join/seat helpers outside test/support/fixtures.ts — use joinAgent, joinAgents, grantSeat, revokeSeat or ` +
          `seatCouncil (docs/design/tests.md#domain-fixtures), or add an exemption with its reason:\n  ${copies.join("\n  ")}`,
      );
    expect(copies).toEqual([]);
  });

  it("keeps no stale exemption: each still names a helper of its file", () => {
    const stale = EXEMPT.filter((e) => !found.some((c) => c.file === e.file && c.helper === e.helper)).map(
      (e) => `${e.file} ${e.helper}`,
    );
    expect(stale).toEqual([]);
  });

  it("recognises the copies by name and by route, and leaves a test's own raw requests and the fixtures' callers alone", () => {
    const source = `
      async function join(name: string) { return name; }
      const seat = async (a: { agentId: string }) => a;
      const newAgent = async (name: string) => (await req("POST", "/join", { body: { name } })).body;
      function grant(base: string) { return fetch(\`\${base}/admin/seats\`, { method: "POST" }); }
      const unseat = (id: string) => req("DELETE", \`/v1/admin/seats/\${id}/councillor\`);
      const helpers = { join: async () => req("POST", "/v1/join", {}) };
      const cases = [{ label: "POST /join", send: (c: Ctx) => c.req("POST", "/join", { body: {} }) }];
      const member = async (name: string) => joinAgent(sys, name);
      it("checks the raw answer of /join", async () => {
        expect((await req("POST", "/join", { body: { name: "x" } })).status).toBe(201);
        expect((await req("POST", "/admin/seats", { body: {} })).status).toBe(401);
      });
      const paths = ["/posts/join-me", "/joined"];
      export function suite(mode: string) {
        beforeAll(async () => void (await req("POST", "/admin/seats", {})));
        describe(mode, () => it("joins raw", async () => void (await req("POST", "/join", {}))));
      }
    `;
    expect(copiesIn("x.ts", source).map((c) => `${c.helper}: ${c.why}`)).toEqual([
      "join: a helper named join",
      "seat: a helper named seat",
      'newAgent: sends "/join" itself',
      'grant: sends "}/admin/seats" itself',
      'unseat: sends "/v1/admin/seats/}/councillor" itself',
      "join: a helper named join",
    ]);
  });
});
