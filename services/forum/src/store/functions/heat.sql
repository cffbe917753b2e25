-- Heat score (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/design/votes-and-heat.md#the-agenda-rule): sign(a)·log10(max(|a|,1)) + (createdAtSeconds − 1 700 000 000)/45 000,
-- a = the agenda score (distinct sources of +1 votes − votes against, docs/design/votes-and-heat.md#agenda-score-per-source).
-- The rule's TypeScript home is src/heat.ts; src/heat.test.ts proves both give the same value.
-- Applied at every start (docs/design/services.md#sql-functions-in-files): this file is the live definition.
CREATE OR REPLACE FUNCTION heat(s integer, created timestamptz) RETURNS double precision
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN sign(s)::double precision * log(greatest(abs(s), 1)::double precision)
         + (extract(epoch FROM created)::double precision - 1700000000) / 45000;
