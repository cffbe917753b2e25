-- Heat score (docs/architecture.md §5, docs/adr/0014): sign(a)·log10(max(|a|,1)) + (createdAtSeconds − 1 700 000 000)/45 000,
-- a = the agenda score (distinct sources of +1 votes − votes against, docs/adr/0154).
-- The rule's TypeScript home is src/heat.ts; src/heat.test.ts proves both give the same value.
-- Applied at every start (docs/adr/0180): this file is the live definition.
CREATE OR REPLACE FUNCTION heat(s integer, created timestamptz) RETURNS double precision
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN sign(s)::double precision * log(greatest(abs(s), 1)::double precision)
         + (extract(epoch FROM created)::double precision - 1700000000) / 45000;
