/**
 * The heat rule (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/design/votes-and-heat.md): the TypeScript home of the rule
 * the forum applies in its vote statement (store/functions/cast_vote.sql and heat.sql, which keep
 * it on the hot path in SQL). heat.test.ts proves the two agree on many inputs.
 */

/** Seconds since the epoch that heat's age term counts from (2023-11-14T22:13:20Z). */
export const HEAT_EPOCH_SECONDS = 1_700_000_000;
/** Seconds of age worth one decade of score (×10 votes): 12.5 h. */
export const HEAT_SECONDS_PER_DECADE = 45_000;

/**
 * The agenda score of a post: distinct sources of its +1 votes − its votes against (a +1 counts
 * once per source per post, docs/design/votes-and-heat.md#agenda-score-per-source). Integers; may be negative.
 */
export function agendaScore(sourcesFor: number, votesAgainst: number): number {
  return sourcesFor - votesAgainst;
}

/**
 * Heat of a post with agenda score `score` created at `createdAt`:
 * sign(s)·log10(max(|s|, 1)) + (createdAtSeconds − 1 700 000 000) / 45 000 — newer posts start
 * hotter, and every tenfold of score is worth 12.5 h of age. A double; the list's hot order.
 */
export function heat(score: number, createdAt: Date): number {
  return (
    Math.sign(score) * Math.log10(Math.max(Math.abs(score), 1)) +
    (createdAt.getTime() / 1000 - HEAT_EPOCH_SECONDS) / HEAT_SECONDS_PER_DECADE
  );
}

/** What the agenda rule reads of the post a vote just changed. */
export interface AgendaCandidate {
  isArchDesign: boolean;
  status: string;
  /** agendaScore after the vote. */
  score: number;
  /** Open proposals ranking ahead of it by (heat, id) descending, counted up to `agendaSize`. */
  ahead: number;
}

/** The rule's settings: AGENDA_MIN_SCORE and AGENDA_SIZE (services/forum/src/config.ts). */
export interface AgendaLimits {
  agendaMinScore: number;
  agendaSize: number;
}

/**
 * True when the vote moves the post to the agenda: an `open` architecture proposal whose agenda
 * score is at least AGENDA_MIN_SCORE and that ranks among the top AGENDA_SIZE open proposals by
 * heat (fewer than AGENDA_SIZE ahead of it). Checked only when its own tallies change; a post on
 * the agenda never moves back (the status is no longer `open`).
 */
export function movesToAgenda(p: AgendaCandidate, limits: AgendaLimits): boolean {
  return p.isArchDesign && p.status === "open" && p.score >= limits.agendaMinScore && p.ahead < limits.agendaSize;
}
