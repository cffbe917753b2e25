import { existsSync } from "node:fs";
import { readPeps, pepToPost, type Pep } from "@aps/cli";
import { eventually, hasNats, hasPostgres, httpClient, pepsDatasetPath, type HttpResult } from "@aps/testkit";
import { expectStatus, grantSeat, joinAgent } from "../support/fixtures.js";
import { startSystem, type Mode, type System } from "../support/system.js";

/**
 * Replays the history of every PEP in datasets/peps.jsonl (docs/design/services.md#the-pep-data-set) through the public
 * HTTP API only (docs/design/council.md#statuses-and-the-lifecycle-rule): each distinct first author joins once and posts their PEPs as
 * architecture proposals; a fixed panel of voter agents votes on every PEP by a rule of its
 * number; a Council of five (one chief) nominates and ballots so that Final and Accepted PEPs
 * are adopted (Final ones then handed off and completed) and Rejected ones are rejected; the
 * first three Drafts are nominated and left in review; everything else stays open. After the
 * closes some votes are changed and a latecomer votes, which must not count.
 *
 * Then it checks every post's status, ballots, hand-off, timeline and vote counts; the agenda
 * (exactly the review cases, paged with the cursor); the forum's projected status in the list;
 * and every agent's Sagacity on GET /me. All expected values come from the plan below, computed
 * independently of the service's answers; the service's answers only give ids and keys.
 */
const DATASET = pepsDatasetPath();
/**
 * The replay's bound on a hang (its hooks' too; measured with a panel of 12: 214 s quiet, 783 s under the stress mode),
 * stretched on a loaded machine by test/support/time-scale.setup.ts like every jest limit (docs/design/tests.md).
 */
const TIMEOUT_MS = 900_000;
/** Requests in flight at once. */
const PARALLEL = 8;
/**
 * Voters of the panel. Six give every PEP a mix of +1, −1 and no vote, changes of mind before the
 * close and a flip after it; the replay's subject is the lifecycle of real proposals, not the
 * volume of votes (a panel of 12 cast about 7,000 votes, most of the replay's requests; 6 cast half as many).
 */
const VOTERS = 6;
/**
 * How long the event-fed projections may take to catch up after the replay: the forum's status
 * in the list (behind thousands of events on the embedded bus), then Sagacity on GET /me.
 */
const LIST_SETTLE_MS = 60_000;
const SAGACITY_SETTLE_MS = 30_000;

const haveDataset = existsSync(DATASET);
if (!haveDataset && process.env.APS_TEST_REQUIRE_REAL === "1")
  throw new Error(`APS_TEST_REQUIRE_REAL=1 but the PEP dataset is missing at ${DATASET}`);
if (!haveDataset) {
  console.warn(
    `\n\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n` +
      `!! pep-replay.test.ts: the PEP dataset is missing at ${DATASET}\n` +
      `!! (set APS_PEPS_DATASET, or put it beside the repository: docs/design/services.md#the-pep-data-set) — the PEP history\n` +
      `!! replay end-to-end test is SKIPPED. Put the dataset there to run it.\n` +
      `!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n`,
  );
}
const mode: Mode = haveDataset && (await hasPostgres()) && (await hasNats()) ? "real" : "embedded";

type Agent = { agentId: string; apiKey: string; name: string };
type Vote = 1 | -1;
type Ballot = { by: number; vote: "approve" | "reject" };
type Final = "open" | "review" | "adopted" | "rejected" | "completed";

/** What happens to one PEP, decided from its number and status only. */
interface PlannedPep {
  pep: Pep;
  author: string;
  /** Votes each voter casts before any Council action, in order (a change of mind is two). */
  votes: { voter: number; vote: Vote }[];
  /** Each voter's vote in effect before the close (0 = none). */
  effective: number[];
  /** Council actions: the nominator (index into the Council), then the ballots after it. */
  nominator?: number;
  ballots: Ballot[];
  /** The case's outcome, when the plan closes it. */
  outcome?: "adopted" | "rejected";
  handoff?: { implementation: "self" | "task"; executor?: string };
  final: Final;
  /** Votes cast after the close: they change the counts, never the Sagacity. */
  lateVotes: { voter: number | "late"; vote: Vote }[];
}

/** A voter's vote on PEP `n`: +1, −1 or none, by a fixed mix of the two numbers. */
function voteOf(n: number, voter: number): 0 | Vote {
  const h = (n * 31 + voter * 17 + ((n >> 2) ^ voter)) % 8;
  return h < 4 ? 1 : h < 6 ? -1 : 0;
}

/**
 * The Council's ballots after the nomination (the nominator's approval is automatic), with
 * seats = 5 so 3 approvals adopt at once and rejection is certain once approvals + the seats
 * still to vote ≤ 2. Members are counted from the nominator on; a member may change a ballot.
 */
function councilPlan(n: number, outcome: "adopted" | "rejected"): Ballot[] {
  const nom = n % 5;
  const m = (k: number) => (nom + k) % 5;
  const variant = n % 3;
  if (outcome === "adopted") {
    if (variant === 0)
      return [
        { by: m(1), vote: "approve" },
        { by: m(2), vote: "approve" },
      ];
    if (variant === 1)
      return [
        { by: m(1), vote: "reject" },
        { by: m(2), vote: "approve" },
        { by: m(3), vote: "approve" },
      ];
    return [
      { by: m(1), vote: "reject" },
      { by: m(2), vote: "reject" },
      { by: m(3), vote: "approve" },
      { by: m(4), vote: "approve" },
    ];
  }
  if (variant === 0)
    return [
      { by: m(1), vote: "reject" },
      { by: m(2), vote: "reject" },
      { by: m(3), vote: "reject" },
    ];
  if (variant === 1)
    return [
      { by: m(1), vote: "approve" },
      { by: m(2), vote: "reject" },
      { by: m(3), vote: "reject" },
      { by: m(4), vote: "reject" },
    ];
  // m(1) approves, then changes its mind
  return [
    { by: m(1), vote: "approve" },
    { by: m(1), vote: "reject" },
    { by: m(2), vote: "reject" },
    { by: m(3), vote: "reject" },
  ];
}

/** Approvals and rejections after `ballots` (the nominator's approval first; a change replaces). */
function tally(nominator: number, ballots: Ballot[]): { approvals: number; rejections: number; count: number } {
  const by = new Map<number, string>([[nominator, "approve"]]);
  for (const b of ballots) by.set(b.by, b.vote);
  const v = [...by.values()];
  return {
    approvals: v.filter((x) => x === "approve").length,
    rejections: v.filter((x) => x === "reject").length,
    count: v.length,
  };
}

/** The status the plan expects right after each ballot of `ballots` (seats = 5). */
function statusAfterEach(nominator: number, ballots: Ballot[]): string[] {
  return ballots.map((_, i) => {
    const t = tally(nominator, ballots.slice(0, i + 1));
    if (t.approvals * 2 > 5) return "adopted";
    if ((t.approvals + (5 - t.count)) * 2 <= 5) return "rejected";
    return "review";
  });
}

function plan(peps: Pep[]): PlannedPep[] {
  const reviewDrafts = peps
    .filter((p) => p.status === "Draft")
    .map((p) => p.pep)
    .sort((a, b) => a - b)
    .slice(0, 3);
  return peps.map((pep) => {
    const n = pep.pep;
    const votes: { voter: number; vote: Vote }[] = [];
    const effective: number[] = [];
    for (let v = 0; v < VOTERS; v++) {
      const vote = voteOf(n, v);
      effective.push(vote);
      if (vote === 0) continue;
      if ((n + v) % 11 === 0) votes.push({ voter: v, vote: -vote as Vote }); // a change of mind, before the close
      votes.push({ voter: v, vote });
    }
    const outcome =
      pep.status === "Final" || pep.status === "Accepted"
        ? "adopted"
        : pep.status === "Rejected"
          ? "rejected"
          : undefined;
    const p: PlannedPep = {
      pep,
      author: pep.authors[0] ?? "Unknown author",
      votes,
      effective,
      ballots: [],
      final: "open",
      lateVotes: [],
    };
    if (outcome) {
      p.nominator = n % 5;
      p.ballots = councilPlan(n, outcome);
      p.outcome = outcome;
      p.final = outcome;
      if (pep.status === "Final") {
        p.handoff =
          n % 2 === 0 ? { implementation: "self" } : { implementation: "task", executor: `python-core-dev-${n % 7}` };
        p.final = "completed";
      }
      // After the close: one voter flips (if it had voted) and a latecomer sides with the outcome.
      const flipper = n % VOTERS;
      if (effective[flipper]) p.lateVotes.push({ voter: flipper, vote: -effective[flipper] as Vote });
      if (n % 3 === 0) p.lateVotes.push({ voter: "late", vote: outcome === "adopted" ? 1 : -1 });
    } else if (reviewDrafts.includes(n)) {
      p.nominator = n % 5;
      // the second one also gets a rejection, which does not decide it (1 approve, 1 reject of 5)
      p.ballots = reviewDrafts[1] === n ? [{ by: (n + 1) % 5, vote: "reject" }] : [];
      p.final = "review";
    }
    return p;
  });
}

/** Runs `fn` over `items` with at most `n` at once; stops at the first failure and rethrows it. */
async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (!failed && next < items.length) {
        try {
          await fn(items[next++]!);
        } catch (err) {
          failed = true;
          throw err;
        }
      }
    }),
  );
}

(haveDataset ? describe : describe.skip)(
  haveDataset
    ? `PEP history replay through the HTTP API (${mode})`
    : "PEP history replay (SKIPPED: the PEP dataset is missing)",
  () => {
    let sys: System | undefined;
    let raw: ReturnType<typeof httpClient>;
    let requests = 0;
    const req = <T = any>(
      method: string,
      path: string,
      opts?: Parameters<ReturnType<typeof httpClient>>[2],
    ): Promise<HttpResult<T>> => {
      requests++;
      return raw<T>(method, path, opts);
    };

    beforeAll(async () => {
      sys = await startSystem(mode, {
        env: {
          POSTS_PER_DAY: "100000",
          COMMENTS_PER_DAY: "100000",
          JOINS_PER_SOURCE_PER_DAY: "100000",
          // Heat never moves a PEP by itself: the Council alone decides in this replay.
          AGENDA_MIN_SCORE: "1000000",
          COUNCIL_DEADLINE: "30d",
          // Should per-minute rate limits exist, they must not throttle the replaying clients.
          RATE_LIMIT_KEYED_PER_MINUTE: "1000000",
          RATE_LIMIT_ANON_PER_MINUTE: "1000000",
        },
      });
      raw = httpClient(sys.baseUrl);
    }, TIMEOUT_MS);
    afterAll(async () => {
      await sys?.stop();
    }, TIMEOUT_MS);

    it(
      "replays every PEP's history and ends with the planned statuses, agenda and Sagacity",
      async () => {
        const peps = (await readPeps(DATASET)).sort((a, b) => a.pep - b.pep);
        expect(peps.length).toBeGreaterThan(0);
        expect(new Set(peps.map((p) => p.pep)).size).toBe(peps.length);
        const planned = plan(peps);
        const started = Date.now();
        const phase = (name: string, t0: number) =>
          console.log(`[pep-replay] ${name}: ${Date.now() - t0} ms, ${requests} requests so far`);

        // ---- agents: the Council (chief first), the voters, a latecomer, one per first author
        let t0 = Date.now();
        /**
         * A new agent (one request, counted), its id checked. A join answered 503 (the gateway's
         * call to identity past its 10 s deadline on a loaded machine) is sent again with the same
         * Idempotency-Key, as an agent is told to (fixtures' joinAgent): the same identity, never a second.
         */
        let joinsResent = 0;
        const newAgent = async (name: string): Promise<Agent> => {
          requests++;
          const a = await joinAgent(sys!, name, {
            resendWhileUnavailable: { timeoutMs: 120_000, onResend: () => void (joinsResent++, requests++) },
          });
          expect(a.agentId).toMatch(/^ext_/);
          return a;
        };
        const council: Agent[] = [await newAgent("Steering Council chief")];
        for (let i = 1; i < 5; i++) council.push(await newAgent(`Steering Councillor ${i}`));
        for (const [i, a] of council.entries()) {
          requests++;
          await grantSeat(sys!, a, i === 0 ? "chief" : "councillor");
        }
        const chief = council[0]!;
        const voters: Agent[] = [];
        for (let v = 0; v < VOTERS; v++) voters.push(await newAgent(`PEP reader ${String(v + 1).padStart(2, "0")}`));
        const late = await newAgent("Latecomer");
        const authorNames = [...new Set(planned.map((p) => p.author))];
        const authors = new Map<string, Agent>();
        await pool(authorNames, PARALLEL, async (name) => void authors.set(name, await newAgent(name.slice(0, 64))));
        phase(
          `joined ${council.length + voters.length + 1 + authors.size} agents (${joinsResent} joins sent again after a 503)`,
          t0,
        );

        // ---- posts: each PEP by its first author, as an architecture proposal
        t0 = Date.now();
        const postId = new Map<number, string>();
        await pool(planned, PARALLEL, async (p) => {
          const b = expectStatus(
            await req("POST", "/posts", { key: authors.get(p.author)!.apiKey, body: pepToPost(p.pep) }),
            201,
            `POST /posts (PEP ${p.pep.pep})`,
          );
          expect(b.status).toBe("open");
          postId.set(p.pep.pep, b.id);
        });
        expect(new Set(postId.values()).size).toBe(planned.length);
        phase(`posted ${postId.size} PEPs`, t0);

        // ---- each PEP's history: votes, then the Council (nomination, ballots, hand-off, completion)
        t0 = Date.now();
        const history = async (p: PlannedPep) => {
          const n = p.pep.pep;
          const id = postId.get(n)!;
          for (const v of p.votes)
            expectStatus(
              await req("POST", `/posts/${id}/vote`, { key: voters[v.voter]!.apiKey, body: { vote: v.vote } }),
              200,
              `vote PEP ${n}`,
            );
          if (p.nominator === undefined) return;
          const nom = expectStatus(
            await req("POST", `/posts/${id}/nominate`, { key: council[p.nominator]!.apiKey }),
            200,
            `nominate PEP ${n}`,
          );
          if (nom.status !== "review" || nom.seats !== 5 || nom.approvals !== 1)
            throw new Error(`nominate PEP ${n}: ${JSON.stringify(nom).slice(0, 300)}`);
          const expected = statusAfterEach(p.nominator, p.ballots);
          for (const [i, b] of p.ballots.entries()) {
            const r = expectStatus(
              await req("POST", `/posts/${id}/council`, {
                key: council[b.by]!.apiKey,
                body: { vote: b.vote, reason: `${b.vote === "approve" ? "In favour" : "Against"} of PEP ${n}.` },
              }),
              200,
              `ballot PEP ${n}`,
            );
            if (r.status !== expected[i])
              throw new Error(`PEP ${n} ballot ${i + 1}: status ${r.status}, planned ${expected[i]}`);
          }
          if ((expected.at(-1) ?? "review") !== (p.outcome ?? "review"))
            throw new Error(`plan error on PEP ${n}: ballots end ${expected.at(-1)}, outcome ${p.outcome}`);
          if (p.handoff) {
            const h = expectStatus(
              await req("POST", `/posts/${id}/handoff`, { key: chief.apiKey, body: p.handoff }),
              200,
              `handoff PEP ${n}`,
            );
            if (h.status !== "implementing") throw new Error(`handoff PEP ${n}: status ${h.status}`);
            const c = expectStatus(
              await req("POST", `/posts/${id}/complete`, { key: chief.apiKey }),
              200,
              `complete PEP ${n}`,
            );
            if (c.status !== "completed") throw new Error(`complete PEP ${n}: status ${c.status}`);
          }
        };
        await pool(planned, PARALLEL, history);
        phase("votes and Council histories", t0);

        // ---- after every close: changed votes and a latecomer (count in the tallies, never in Sagacity)
        t0 = Date.now();
        await pool(
          planned.filter((p) => p.lateVotes.length),
          PARALLEL,
          async (p) => {
            for (const v of p.lateVotes) {
              const who = v.voter === "late" ? late : voters[v.voter]!;
              expectStatus(
                await req("POST", `/posts/${postId.get(p.pep.pep)}/vote`, { key: who.apiKey, body: { vote: v.vote } }),
                200,
                `late vote PEP ${p.pep.pep}`,
              );
            }
          },
        );
        phase("late votes", t0);
        const replayMs = Date.now() - started;
        const replayRequests = requests;

        // ---- expected values, from the plan alone
        const finalVotes = (p: PlannedPep) => {
          const by = new Map<string, number>();
          p.effective.forEach((v, i) => v && by.set(`v${i}`, v));
          for (const v of p.lateVotes) by.set(v.voter === "late" ? "late" : `v${v.voter}`, v.vote);
          const all = [...by.values()];
          const f = all.filter((x) => x === 1).length;
          const a = all.filter((x) => x === -1).length;
          return { for: f, against: a, score: f - a };
        };
        const expectedSagacity = new Map<string, number>();
        const add = (agentId: string, pts: number) =>
          expectedSagacity.set(agentId, (expectedSagacity.get(agentId) ?? 0) + pts);
        for (const a of [...council, ...voters, late, ...authors.values()]) add(a.agentId, 0);
        for (const p of planned) {
          if (!p.outcome) continue;
          if (p.outcome === "adopted") add(authors.get(p.author)!.agentId, 10);
          const sign = p.outcome === "adopted" ? 1 : -1;
          p.effective.forEach((v, i) => v && add(voters[i]!.agentId, v === sign ? 1 : -1));
        }

        // ---- every post: status, ballots, hand-off, timeline and votes
        t0 = Date.now();
        const mismatches: string[] = [];
        await pool(planned, PARALLEL, async (p) => {
          const n = p.pep.pep;
          const r = await req("GET", `/posts/${postId.get(n)}`);
          if (r.status !== 200) return void mismatches.push(`PEP ${n}: GET → ${r.status}`);
          const d = r.body;
          const bad = (what: string, got: unknown, want: unknown) => {
            if (JSON.stringify(got) !== JSON.stringify(want))
              mismatches.push(`PEP ${n} (${p.pep.status}): ${what} ${JSON.stringify(got)} ≠ ${JSON.stringify(want)}`);
          };
          bad("status", d.status, p.final);
          bad("author", d.author?.agentId, authors.get(p.author)!.agentId);
          bad("votes", d.votes, finalVotes(p));
          const statuses: string[] = ["open"];
          if (p.nominator !== undefined) {
            statuses.push("review");
            if (p.outcome) statuses.push(p.outcome);
            if (p.handoff) statuses.push("implementing", "completed");
            const t = tally(p.nominator, p.ballots);
            bad(
              "council",
              { seats: d.council?.seats, approvals: d.council?.approvals, rejections: d.council?.rejections },
              { seats: 5, approvals: t.approvals, rejections: t.rejections },
            );
            bad("ballot count", d.councilBallots?.length, t.count);
            bad("nominator", d.timeline?.[1]?.by, council[p.nominator]!.agentId);
            if (p.outcome) bad("closed by", d.timeline?.[2]?.by, council[p.ballots.at(-1)!.by]!.agentId);
            bad("closedAt set", d.council?.closedAt != null, p.outcome !== undefined);
          } else {
            bad("council", d.council, null);
            bad("ballots", d.councilBallots, []);
          }
          bad(
            "timeline",
            d.timeline?.map((x: { status: string }) => x.status),
            statuses,
          );
          bad(
            "handoff",
            d.handoff
              ? { implementation: d.handoff.implementation, executor: d.handoff.executor, by: d.handoff.by }
              : null,
            p.handoff
              ? { implementation: p.handoff.implementation, executor: p.handoff.executor ?? null, by: chief.agentId }
              : null,
          );
        });
        expect(mismatches.slice(0, 20)).toEqual([]);
        phase("read every post back", t0);

        // ---- the agenda: exactly the review cases, paged 2 at a time
        const review = planned.filter((p) => p.final === "review");
        expect(review.length).toBe(3);
        const agenda: any[] = [];
        let cursor: string | null = null;
        let pages = 0;
        do {
          const page: HttpResult<{ items: any[]; nextCursor: string | null }> = await req(
            "GET",
            `/agenda?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
          );
          expect(page.status).toBe(200);
          expect(page.body.items.length).toBeLessThanOrEqual(2);
          agenda.push(...page.body.items);
          cursor = page.body.nextCursor;
          pages++;
        } while (cursor && pages < 50);
        expect(pages).toBe(2);
        expect(agenda.map((a) => a.id).sort()).toEqual(review.map((p) => postId.get(p.pep.pep)!).sort());
        for (const p of review) {
          const a = agenda.find((x) => x.id === postId.get(p.pep.pep));
          const t = tally(p.nominator!, p.ballots);
          expect({
            pep: p.pep.pep,
            status: a.status,
            title: a.title,
            votes: a.votes,
            seats: a.council.seats,
            ballots: a.council.ballots.length,
            approvals: a.council.approvals,
          }).toEqual({
            pep: p.pep.pep,
            status: "review",
            title: pepToPost(p.pep).title,
            votes: finalVotes(p),
            seats: 5,
            ballots: t.count,
            approvals: t.approvals,
          });
        }

        // ---- the forum's projected status in the list catches up with every close
        t0 = Date.now();
        await eventually(
          async () => {
            const listed = new Map<string, string>();
            let c: string | null = null;
            do {
              const page: HttpResult<{ items: { id: string; status: string }[]; nextCursor: string | null }> =
                await req("GET", `/posts?kind=arch&sort=new&limit=100${c ? `&cursor=${encodeURIComponent(c)}` : ""}`);
              expect(page.status).toBe(200);
              for (const it of page.body.items) listed.set(it.id, it.status);
              c = page.body.nextCursor;
            } while (c);
            const wrong = planned
              .filter((p) => listed.get(postId.get(p.pep.pep)!) !== p.final)
              .map((p) => `PEP ${p.pep.pep}: listed ${listed.get(postId.get(p.pep.pep)!)}, planned ${p.final}`);
            expect(wrong.slice(0, 20)).toEqual([]);
            expect(listed.size).toBe(planned.length);
          },
          LIST_SETTLE_MS,
          250,
        );
        phase("list projection settled", t0);

        // ---- every agent's Sagacity on GET /me
        t0 = Date.now();
        const everyone = [...council, ...voters, late, ...authors.values()];
        let wrongSagacity: string[] = [];
        await eventually(
          async () => {
            wrongSagacity = [];
            await pool(everyone, PARALLEL, async (a) => {
              const me = await req("GET", "/me", { key: a.apiKey });
              if (me.status !== 200 || me.body.agentId !== a.agentId)
                return void wrongSagacity.push(`${a.name}: GET /me → ${me.status} ${me.body?.agentId}`);
              if (me.body.sagacity !== expectedSagacity.get(a.agentId))
                wrongSagacity.push(
                  `${a.name}: sagacity ${me.body.sagacity}, planned ${expectedSagacity.get(a.agentId)}`,
                );
            });
            expect(wrongSagacity.slice(0, 20)).toEqual([]);
          },
          SAGACITY_SETTLE_MS,
          250,
        );
        phase("Sagacity settled", t0);

        // the plan is not degenerate: every outcome and both vote signs occur, and somebody earned nothing
        const finals = new Map<string, number>();
        for (const p of planned) finals.set(p.final, (finals.get(p.final) ?? 0) + 1);
        expect([...finals.keys()].sort()).toEqual(["adopted", "completed", "open", "rejected", "review"]);
        const totals = [...expectedSagacity.values()];
        expect(Math.max(...totals)).toBeGreaterThan(10);
        expect(totals).toContain(0);

        console.log(
          `[pep-replay] ${mode}: replayed ${planned.length} PEPs (${[...finals].map(([k, v]) => `${v} ${k}`).join(", ")}) with ` +
            `${everyone.length} agents (${authors.size} authors, ${VOTERS} voters, 1 latecomer, 5 Council) in ${replayRequests} requests, ` +
            `${(replayMs / 1000).toFixed(1)} s (${Math.round(replayRequests / (replayMs / 1000))} req/s, ${PARALLEL} in flight); ` +
            `${requests} requests and ${((Date.now() - started) / 1000).toFixed(1)} s with the checks; Sagacity awarded in total ${totals.reduce((a, b) => a + b, 0)}`,
        );
      },
      TIMEOUT_MS,
    );
  },
);
