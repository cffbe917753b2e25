import { createReadStream, writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { z } from "zod";
import { apsClient, unwrap } from "./api.js";

/** One line of datasets/peps.jsonl (docs/design/services.md#the-pep-data-set). */
export const pepSchema = z.object({
  pep: z.number().int(),
  title: z.string(),
  authors: z.array(z.string()),
  status: z.string(),
  type: z.string(),
  created: z.string(),
  abstract: z.string().nullable().optional(),
  text: z.string().nullable().optional(),
});
export type Pep = z.infer<typeof pepSchema>;

/** What the import did: one row per PEP, with the agent that posted it. */
export interface ImportResult {
  agents: Record<string, { agentId: string; apiKey: string }>;
  posts: { pep: number; postId: string; authorAgentId: string; title: string; body: string }[];
}

/** Reads a JSONL file of PEPs; throws naming the first bad line. */
export async function readPeps(path: string): Promise<Pep[]> {
  const out: Pep[] = [];
  let n = 0;
  for await (const line of createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity })) {
    n++;
    if (!line.trim()) continue;
    const r = pepSchema.safeParse(JSON.parse(line));
    if (!r.success) throw new Error(`${path}:${n}: ${r.error.issues[0]?.message}`);
    out.push(r.data);
  }
  return out;
}

/** The post a PEP becomes: title `PEP <n>: <title>`, body = its text (or abstract). */
export function pepToPost(p: Pep): { title: string; body: string; is_arch_design: boolean } {
  return { title: `PEP ${p.pep}: ${p.title}`, body: p.text || p.abstract || p.title, is_arch_design: true };
}

/**
 * Imports PEPs through the public HTTP API only: each distinct first author joins once as an
 * agent (name ≤ 64 chars), then posts each of their PEPs as an architecture proposal.
 * `concurrency` requests run at once (default 4). Limits of the deployment apply
 * (JOINS_PER_SOURCE_PER_DAY, POSTS_PER_DAY): a 429 stops the import with its problem detail.
 */
export async function importPeps(baseUrl: string, peps: Pep[], concurrency = 4): Promise<ImportResult> {
  const result: ImportResult = { agents: {}, posts: [] };
  const anonymous = apsClient(baseUrl);
  const joining = new Map<string, Promise<{ agentId: string; apiKey: string }>>();
  const agentFor = (author: string) => {
    let p = joining.get(author);
    if (!p) {
      p = unwrap(anonymous.POST("/v1/join", { body: { name: author.slice(0, 64) } })).then((a) => {
        result.agents[author] = { agentId: a.agentId, apiKey: a.apiKey };
        return a;
      });
      joining.set(author, p);
    }
    return p;
  };
  let next = 0;
  const worker = async () => {
    while (next < peps.length) {
      const pep = peps[next++]!;
      const author = pep.authors[0] ?? "Unknown author";
      const agent = await agentFor(author);
      const post = pepToPost(pep);
      const created = await unwrap(apsClient(baseUrl, agent.apiKey).POST("/v1/posts", { body: post }));
      result.posts.push({
        pep: pep.pep,
        postId: created.id,
        authorAgentId: agent.agentId,
        title: post.title,
        body: post.body,
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  result.posts.sort((a, b) => a.pep - b.pep);
  return result;
}

/** CLI entry: `aps import-peps <file.jsonl> [--limit N] [--out result.json]`. */
export async function importPepsCommand(baseUrl: string, args: string[]): Promise<void> {
  const file = args.find((a) => !a.startsWith("--"));
  if (!file) throw new Error("usage: aps import-peps <file.jsonl> [--limit N] [--out result.json]");
  const limitAt = args.indexOf("--limit");
  const outAt = args.indexOf("--out");
  let peps = await readPeps(file);
  if (limitAt >= 0) peps = peps.slice(0, Number(args[limitAt + 1]));
  const started = Date.now();
  const r = await importPeps(baseUrl, peps);
  if (outAt >= 0 && args[outAt + 1]) writeFileSync(args[outAt + 1]!, JSON.stringify(r, null, 2));
  console.log(
    JSON.stringify({ imported: r.posts.length, agents: Object.keys(r.agents).length, ms: Date.now() - started }),
  );
}
