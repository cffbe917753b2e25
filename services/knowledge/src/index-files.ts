import { appendFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { join } from "node:path";

/**
 * Version of the persisted index's format (docs/design/search-and-translation.md#resume-and-rebuild). Bump it whenever what a snapshot holds
 * changes meaning: the MiniSearch options, the analysis (text.ts, markup.ts) or the stored fields. A
 * snapshot of another version is not loaded: the service rebuilds the index from the forum.
 */
/** 3: comments are documents too (docs/design/search-and-translation.md#comments-in-search). */
export const INDEX_FORMAT = 3;

/** The last event the index applied (docs/design/search-and-translation.md#resume-and-rebuild): its id (ULID) and how many events were applied since the first snapshot. */
export interface IndexPosition {
  /** `eventId` of the last applied event, "" before the first one. */
  eventId: string;
  /** Events applied, over the life of this index folder. */
  applied: number;
}

/**
 * One change in the append log, with the event that caused it: an upsert of documents, a removal of
 * ids, or new tags for one document (format 2: a status change, docs/design/search-and-translation.md#keeping-the-index-current).
 */
export type LogRecord =
  | { op: "upsert"; docs: unknown[]; eventId: string }
  | { op: "remove"; ids: string[]; eventId: string }
  | { op: "retag"; id: string; tags: string[]; eventId: string };

/** `meta.json`: which snapshot is current and where the index stood when it was written. */
interface Meta {
  format: number;
  generation: number;
  position: IndexPosition;
}

/** What `load` found: the snapshot's MiniSearch JSON and every change logged after it, in order. */
export interface LoadedIndex {
  /** The output of MiniSearch `toJSON()`, serialised. */
  json: string;
  position: IndexPosition;
  log: LogRecord[];
}

/** Why a folder gave no index: `empty` (first start), `format` (an older/newer INDEX_FORMAT), `broken` (unreadable). */
export type NoIndex = { reason: "empty" | "format" | "broken"; detail?: string };

/**
 * The embedded engine's files under one folder (docs/design/search-and-translation.md#resume-and-rebuild): `meta.json` (format, generation,
 * position), `snapshot-<g>.json` (MiniSearch `toJSON`, written to a temporary file, fsynced, then
 * renamed), and `log-<g>.jsonl` (one line per change applied after snapshot `g`, appended before
 * the event is acknowledged). Loading = the current snapshot + every log of generation ≥ g, so a
 * change logged while a new snapshot was being written is never lost. Single writer: one knowledge
 * process per folder.
 */
export class IndexFiles {
  private generation = 0;
  /** Records appended since the current snapshot. */
  logged = 0;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  private meta(): Meta | undefined {
    try {
      return JSON.parse(readFileSync(join(this.dir, "meta.json"), "utf8")) as Meta;
    } catch {
      return undefined;
    }
  }

  /** Reads the current snapshot and the logs after it; a NoIndex when there is none to use. Synchronous: start-up only. */
  load(): LoadedIndex | NoIndex {
    const meta = this.meta();
    if (!meta) return { reason: "empty" };
    if (meta.format !== INDEX_FORMAT)
      return { reason: "format", detail: `snapshot format ${meta.format}, this build reads ${INDEX_FORMAT}` };
    try {
      const json = readFileSync(join(this.dir, `snapshot-${meta.generation}.json`), "utf8");
      const log: LogRecord[] = [];
      for (const g of this.logGenerations().filter((x) => x >= meta.generation)) {
        for (const line of readFileSync(join(this.dir, `log-${g}.jsonl`), "utf8").split("\n")) {
          if (!line) continue;
          try {
            log.push(JSON.parse(line) as LogRecord);
          } catch {
            break; // a line cut by a crash: the event was not acknowledged, it is delivered again
          }
        }
      }
      this.generation = Math.max(meta.generation, ...this.logGenerations());
      this.logged = log.length;
      return { json, position: meta.position, log };
    } catch (err) {
      return { reason: "broken", detail: String(err) };
    }
  }

  private logGenerations(): number[] {
    return readdirSync(this.dir)
      .map((f) => /^log-(\d+)\.jsonl$/.exec(f)?.[1])
      .filter((g): g is string => g !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
  }

  /** Removes every file of the folder's index (before a rebuild). */
  clear(): void {
    for (const f of readdirSync(this.dir))
      if (/^(meta\.json|snapshot-\d+\.json|log-\d+\.jsonl)(\.tmp)?$/.test(f)) rmSync(join(this.dir, f));
    this.generation = 0;
    this.logged = 0;
  }

  /** Appends one change to the current log (synchronously, so it is on file before the caller acknowledges the event). */
  append(rec: LogRecord): void {
    appendFileSync(join(this.dir, `log-${this.generation}.jsonl`), `${JSON.stringify(rec)}\n`);
    this.logged++;
  }

  /**
   * Starts a new generation at once (later appends go to its log) and writes `json` as its snapshot:
   * temporary file, fsync, rename, then `meta.json` the same way, then the older files are removed.
   */
  async snapshot(json: string, position: IndexPosition): Promise<void> {
    const g = ++this.generation;
    this.logged = 0;
    await writeAtomically(join(this.dir, `snapshot-${g}.json`), json);
    await writeAtomically(
      join(this.dir, "meta.json"),
      JSON.stringify({ format: INDEX_FORMAT, generation: g, position }),
    );
    for (const f of readdirSync(this.dir)) {
      const m = /^(?:snapshot-(\d+)\.json|log-(\d+)\.jsonl)$/.exec(f);
      if (m && Number(m[1] ?? m[2]) < g) await rm(join(this.dir, f), { force: true });
    }
  }

  /** Bytes of the current snapshot and logs on disk. */
  sizeOnDisk(): number {
    let n = 0;
    for (const f of readdirSync(this.dir)) n += statSync(join(this.dir, f)).size;
    return n;
  }
}

async function writeAtomically(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, "w");
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}
