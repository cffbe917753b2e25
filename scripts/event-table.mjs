// npm run events:table — writes the event table of docs/design/events.md "Event table", between
// `<!-- events:begin -->` and `<!-- events:end -->`: every event type of the catalogue
// (`EVENT_TYPES`, generated from the proto into proto/src/gen/option-tables.ts, re-exported by
// packages/platform/src/bus/event-types.ts and read from the built @aps/platform), its
// proto message, and who consumes it — found in the services' sources, not written by hand:
//   - a durable consumer is a call `consumeEvents(bus, { durable, handlers })`: its name is the
//     `durable` string (or a string constant of the file), its event types the keys of `handlers`
//     (an object literal; or, when `handlers` is built in a loop, the keys of the object literals
//     the enclosing function passes to `Object.keys(…)`, e.g. notifications' PUBLIC_EVENT_RULES);
//   - an ephemeral subscription is a call `<x>.subscribe([subjects…], …)` whose subjects are
//     literals after the bus prefix (`${p}.forum.>`), matched with NATS wildcards.
// A `consumeEvents` call it cannot read fails the script, so a consumer cannot silently drop out of
// the table. `--check` writes nothing and exits 1 when the file differs from what it would write;
// `--file <path>` checks or rewrites another copy (the test uses one). Needs @aps/platform built.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { EVENT_TYPES } from "@aps/platform";
import { events } from "@aps/proto";
import ts from "typescript";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const BEGIN = "<!-- events:begin -->";
const END = "<!-- events:end -->";

/** Every `.ts` file under `dir` except tests, declarations and generated code. @param {string} dir */
function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== "gen" && name !== "node_modules" && name !== "dist") out.push(...sources(p));
    } else if (name.endsWith(".ts") && !name.endsWith(".test.ts") && !name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** The parsed file at `path`. @param {string} path */
const parse = (path) => ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);

/** A property's name as written (`"forum.vote_cast"`, `durable`). @param {ts.PropertyName} name */
const nameOf = (name) => (ts.isStringLiteral(name) || ts.isIdentifier(name) ? name.text : undefined);

/** The initializer of the top-level `const <name> = …` of `file`, if any. */
function constInit(file, name) {
  for (const st of file.statements)
    if (ts.isVariableStatement(st))
      for (const d of st.declarationList.declarations)
        if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer) return d.initializer;
  return undefined;
}

/** The keys of the object literal `name` is bound to in `file`, or in the relative module it imports it from. */
function objectKeys(file, name) {
  let init = constInit(file, name);
  if (!init) {
    for (const st of file.statements) {
      if (!ts.isImportDeclaration(st) || !ts.isStringLiteral(st.moduleSpecifier)) continue;
      const spec = st.moduleSpecifier.text;
      const named = st.importClause?.namedBindings;
      if (!spec.startsWith(".") || !named || !ts.isNamedImports(named)) continue;
      if (!named.elements.some((e) => e.name.text === name)) continue;
      init = constInit(parse(resolve(dirname(file.fileName), spec.replace(/\.js$/, ".ts"))), name);
    }
  }
  if (!init || !ts.isObjectLiteralExpression(init)) return undefined;
  return init.properties.map((p) => (p.name ? nameOf(p.name) : undefined)).filter(Boolean);
}

/** The function (declaration, expression or arrow) around `node`. */
function enclosingFunction(node) {
  for (let n = node.parent; n; n = n.parent) if (ts.isFunctionLike(n)) return n;
  return node.getSourceFile();
}

/** Every `Object.keys(X)` argument name inside `scope`. */
function objectKeysArguments(scope) {
  const names = [];
  const visit = (n) => {
    if (
      ts.isCallExpression(n) &&
      n.expression.getText() === "Object.keys" &&
      n.arguments.length === 1 &&
      ts.isIdentifier(n.arguments[0])
    )
      names.push(n.arguments[0].text);
    ts.forEachChild(n, visit);
  };
  visit(scope);
  return names;
}

/** `${p}.forum.>` or "forum.>" → "forum.>"; undefined when it is not a literal subject. */
function subjectPattern(node) {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node) && node.head.text === "" && node.templateSpans.length === 1) {
    const rest = node.templateSpans[0].literal.text;
    return rest.startsWith(".") ? rest.slice(1) : undefined;
  }
  return undefined;
}

/** Whether NATS subject pattern `pattern` (`*`, `>`) matches `subject`. */
function matches(pattern, subject) {
  const p = pattern.split(".");
  const s = subject.split(".");
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">") return s.length > i;
    if (i >= s.length || (p[i] !== "*" && p[i] !== s[i])) return false;
  }
  return p.length === s.length;
}

/**
 * @typedef {object} Consumer
 * @property {string} service the service folder it lives in, e.g. "forum"
 * @property {string} name the durable name, or "ephemeral"
 * @property {boolean} durable
 * @property {string} file repository-relative path of the declaring file
 * @property {string[]} types the catalogue types it consumes
 */

/**
 * Finds the consumers declared in the services' sources under `root`.
 * @param {string} root @param {string[]} catalogue @returns {Consumer[]}
 */
export function findConsumers(root, catalogue) {
  const consumers = [];
  const dirs = ["services", "packages"].flatMap((d) =>
    readdirSync(join(root, d)).map((name) => ({ service: name, src: join(root, d, name, "src") })),
  );
  for (const { service, src } of dirs) {
    let files;
    try {
      files = sources(src);
    } catch {
      continue; // no src/
    }
    for (const path of files) {
      const text = readFileSync(path, "utf8");
      if (!text.includes("consumeEvents(") && !text.includes(".subscribe(")) continue;
      const file = parse(path);
      const rel = relative(root, path);
      const fail = (node, why) => {
        const { line } = file.getLineAndCharacterOfPosition(node.getStart());
        throw new Error(`${rel}:${line + 1}: ${why}`);
      };
      const visit = (node) => {
        if (ts.isCallExpression(node)) {
          const callee = node.expression;
          const fn = ts.isIdentifier(callee)
            ? callee.text
            : ts.isPropertyAccessExpression(callee)
              ? callee.name.text
              : "";
          if (fn === "consumeEvents") {
            const spec = node.arguments[1];
            if (!spec || !ts.isObjectLiteralExpression(spec))
              fail(node, "consumeEvents(bus, spec): spec is not an object literal");
            const prop = (key) => spec.properties.find((p) => p.name && nameOf(p.name) === key);
            const durableProp = prop("durable");
            let durable;
            if (durableProp && ts.isPropertyAssignment(durableProp)) {
              const v = durableProp.initializer;
              if (ts.isStringLiteral(v)) durable = v.text;
              else if (ts.isIdentifier(v)) {
                const c = constInit(file, v.text);
                if (c && ts.isStringLiteral(c)) durable = c.text;
              }
            }
            if (!durable) fail(node, "consumeEvents: cannot read the durable name (a string or a string constant)");
            const handlersProp = prop("handlers");
            let keys;
            if (
              handlersProp &&
              ts.isPropertyAssignment(handlersProp) &&
              ts.isObjectLiteralExpression(handlersProp.initializer)
            )
              keys = handlersProp.initializer.properties.map((p) => (p.name ? nameOf(p.name) : undefined));
            else if (handlersProp) {
              // Built in a loop: the object literals whose keys the enclosing function enumerates.
              const names = objectKeysArguments(enclosingFunction(node));
              const found = names.map((n) => objectKeys(file, n));
              if (names.length > 0 && found.every(Boolean)) keys = found.flat();
            }
            if (!keys || keys.some((k) => !k))
              fail(node, `consumeEvents "${durable}": cannot read which event types its handlers take`);
            const unknown = keys.filter((k) => !catalogue.includes(k));
            if (unknown.length > 0)
              fail(node, `consumeEvents "${durable}": not in the catalogue: ${unknown.join(", ")}`);
            consumers.push({ service, name: durable, durable: true, file: rel, types: [...new Set(keys)] });
          } else if (fn === "subscribe" && node.arguments[0] && ts.isArrayLiteralExpression(node.arguments[0])) {
            const patterns = node.arguments[0].elements.map(subjectPattern);
            if (patterns.some((p) => p === undefined))
              fail(node, "subscribe([...]): a subject that is not a literal after the bus prefix");
            const types = catalogue.filter((t) => patterns.some((p) => matches(p, t)));
            consumers.push({ service, name: "ephemeral", durable: false, file: rel, types });
          }
        }
        ts.forEachChild(node, visit);
      };
      visit(file);
    }
  }
  return consumers.sort((a, b) => Number(b.durable) - Number(a.durable) || a.service.localeCompare(b.service));
}

/**
 * The block between the markers (markers included) for `catalogue` and `consumers`.
 * @param {string[]} catalogue @param {Map<string, string>} messages type → proto message name
 * @param {Consumer[]} consumers @returns {string}
 */
export function render(catalogue, messages, consumers) {
  const who = (c) => (c.durable ? `${c.service} (\`${c.name}\`)` : `${c.service} (ephemeral)`);
  const rows = catalogue.map((t) => {
    const by = consumers.filter((c) => c.types.includes(t)).map(who);
    return `| \`${t}\` | ${t.split(".")[0]} | \`${messages.get(t) ?? "?"}\` | ${by.length ? by.join(", ") : "none"} |`;
  });
  const consumerRows = consumers.map(
    (c) =>
      `| ${c.durable ? `\`${c.name}\`` : "ephemeral subscription"} | ${c.service} | [\`${c.file}\`](../../${c.file}) | ${c.types.length} |`,
  );
  return `${BEGIN}
<!-- Generated by scripts/event-table.mjs from the event catalogue (proto/src/gen/option-tables.ts)
     and the consumers declared in the services' code. Do not edit: run \`npm run events:table\`. -->

| event | producer | payload (a message of the producer's .proto) | consumed by |
|---|---|---|---|
${rows.join("\n")}

| consumer | service | declared in | event types |
|---|---|---|---|
${consumerRows.join("\n")}
${END}`;
}

/** `text` (docs/design/events.md) with its event block as it should be. @param {string} text */
export function generate(text, root = ROOT) {
  const catalogue = Object.keys(EVENT_TYPES);
  const names = new Map(Object.entries(events).map(([name, codec]) => [codec, name]));
  const messages = new Map(catalogue.map((t) => [t, names.get(EVENT_TYPES[t])]));
  const from = text.indexOf(BEGIN);
  const to = text.indexOf(END);
  if (from < 0 || to < from) throw new Error(`no ${BEGIN} … ${END} block`);
  return (
    text.slice(0, from) + render(catalogue, messages, findConsumers(root, catalogue)) + text.slice(to + END.length)
  );
}

function main() {
  const args = process.argv.slice(2);
  const check = args.includes("--check");
  const fileArg = args.indexOf("--file");
  const path = fileArg >= 0 ? args[fileArg + 1] : join(ROOT, "docs/design/events.md");
  const text = readFileSync(path, "utf8");
  const next = generate(text);
  if (check) {
    if (next !== text) {
      const a = text.split("\n");
      const b = next.split("\n");
      const i = a.findIndex((l, k) => l !== b[k]);
      console.error(`${path}:${i + 1}: the event table is stale; run \`npm run events:table\` and commit it`);
      console.error(`  committed: ${a[i] ?? "(end of file)"}`);
      console.error(`  generated: ${b[i] ?? "(end of file)"}`);
      process.exit(1);
    }
  } else if (next !== text) {
    writeFileSync(path, next);
    console.log(`${path}: event table written`);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
