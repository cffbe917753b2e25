import { connect, type NatsConnection } from "nats";
import { events } from "@aps/proto";
import type { Manifest } from "../../ops/chart-tools.js";
import type { AckedWrites } from "./load.js";
import type { Pod } from "./pod.js";
import { renderedSecret } from "./render.js";

/**
 * The rehearsal's view of the JetStream event stream: a connection from the test process to the
 * in-chart NATS servers as the chart's `operator` user, the stream's leader, and the forum events
 * it holds — to check that every write the API acknowledged reached the stream
 * (docs/design/events.md "Outbox", docs/operations/rehearsal.md).
 */

/** The forum events of the stream, by what they name. */
export interface ForumEvents {
  posts: Set<string>;
  comments: Set<string>;
  /** `<postId> <voterId>` of every vote_cast event. */
  votes: Set<string>;
}

/** A container env value of the rendered Deployment `name`, by variable (literal `value` only). */
function envValue(objects: readonly Manifest[], deployment: string, variable: string): string {
  const d = objects.find((o) => o.kind === "Deployment" && o.metadata.name === deployment);
  const v = d?.spec.template.spec.containers[0].env?.find((e: any) => e.name === variable)?.value;
  if (typeof v !== "string") throw new Error(`${deployment} has no literal ${variable}`);
  return v;
}

/** The event stream of a rehearsal: its name, subject prefix and a connection to its servers. */
export class RehearsalStream {
  private constructor(
    private readonly nc: NatsConnection,
    /** The stream's name (config.natsStream). */
    readonly stream: string,
    /** The subject prefix (config.subjectPrefix). */
    readonly prefix: string,
  ) {}

  /**
   * Connects to every server of `natsPods` (their addresses, port 4222) as `operator`, with the
   * password the rendered Secret holds; the stream's name and subject prefix are the forum
   * Deployment's env. Rejects when no server answers within 10 s.
   */
  static async connect(objects: readonly Manifest[], natsPods: readonly Pod[]): Promise<RehearsalStream> {
    const nc = await connect({
      servers: natsPods.map((p) => `${p.ip}:4222`),
      user: "operator",
      pass: renderedSecret(objects, "NATS_PASSWORD_OPERATOR"),
      name: "aps-rehearsal",
      timeout: 10_000,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
    });
    return new RehearsalStream(
      nc,
      envValue(objects, "aps-forum", "NATS_STREAM"),
      envValue(objects, "aps-forum", "APS_SUBJECT_PREFIX"),
    );
  }

  /** The server that leads the stream's replicas now (its `server_name`: the pod's name), if any. */
  async leader(): Promise<string | undefined> {
    const jsm = await this.nc.jetstreamManager({ timeout: 5_000 });
    return (await jsm.streams.info(this.stream)).cluster?.leader;
  }

  /**
   * Every post_created, comment_created and vote_cast event the stream holds, decoded
   * (the services' event messages), read with an ordered consumer from the first to the last message there is;
   * rejects when the read stalls for 60 s.
   */
  async forumEvents(): Promise<ForumEvents> {
    const js = this.nc.jetstream({ timeout: 10_000 });
    const subject = (t: string) => `${this.prefix}.forum.${t}`;
    const out: ForumEvents = { posts: new Set(), comments: new Set(), votes: new Set() };
    // one filter: several (filter_subjects) need NATS 2.10, and the stand-in server is 2.9
    const consumer = await js.consumers.get(this.stream, { filterSubjects: `${this.prefix}.forum.>` });
    const messages = await consumer.consume();
    // a read that stalls (a server gone, a consumer the server refused) ends here, not at jest's timeout
    let stalled = false;
    const bound = setTimeout(() => ((stalled = true), messages.stop()), 60_000);
    for await (const m of messages) {
      if (m.subject === subject("post_created")) out.posts.add(events.PostCreated.decode(m.data).postId);
      else if (m.subject === subject("comment_created"))
        out.comments.add(events.CommentCreated.decode(m.data).commentId);
      else if (m.subject === subject("vote_cast")) {
        const v = events.VoteCast.decode(m.data);
        out.votes.add(`${v.postId} ${v.voterId}`);
      }
      if (m.info.pending === 0) break;
    }
    clearTimeout(bound);
    if (stalled) throw new Error(`reading ${this.stream} stalled after ${out.posts.size} posts (60 s)`);
    return out;
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.nc.close();
  }
}

/**
 * The acknowledged writes of `acked` whose event `seen` lacks, one line each, and how many events
 * were looked for: a post's post_created, a comment's comment_created and each acknowledged vote's
 * vote_cast (a vote changed later has more; one is enough).
 */
export function missingEvents(acked: AckedWrites, seen: ForumEvents): { missing: string[]; total: number } {
  const missing: string[] = [];
  let total = 0;
  for (const id of acked.posts.keys()) {
    total++;
    if (!seen.posts.has(id)) missing.push(`post_created ${id}`);
  }
  for (const ids of acked.comments.values())
    for (const id of ids) {
      total++;
      if (!seen.comments.has(id)) missing.push(`comment_created ${id}`);
    }
  for (const [post, votes] of acked.votes)
    for (const voter of votes.keys()) {
      total++;
      if (!seen.votes.has(`${post} ${voter}`)) missing.push(`vote_cast ${post} by ${voter}`);
    }
  return { missing, total };
}
