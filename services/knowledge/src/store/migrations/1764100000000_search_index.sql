-- Up Migration
-- The knowledge service's search index in PostgreSQL (docs/adr/0142): the all-in-one's engine, read
-- page by page from disk, so a restart loads nothing and memory does not grow with the forum.
-- pg_trgm (a trusted contrib extension, shipped with PostgreSQL and with embedded-postgres) indexes
-- the vocabulary by trigrams for typo lookups; it is installed into this schema (the first of the
-- search_path), or left where it already is.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- One row per searchable document (a docs page or a post). `tsv`: the terms of text.ts's analysis
-- (not PostgreSQL's parser), title positions weighted A, body positions D; `body`: the plain text
-- (markup.ts) the snippets are cut from, read only for the page of results; `h`: digest of the
-- indexed title + body (an upsert of the same text changes nothing); `title_terms`: the title's
-- length in terms (BM25's normalisation of a title match); `title_tsv`: the title's terms, inline, for
-- ranking every match by its title without reading `tsv`.
CREATE TABLE documents (
  id    text COLLATE "C" PRIMARY KEY,
  kind  text NOT NULL,
  title text NOT NULL,
  url   text NOT NULL,
  tags  text[] NOT NULL,
  body  text NOT NULL,
  tsv   tsvector NOT NULL,
  title_terms smallint NOT NULL,
  title_tsv   tsvector NOT NULL,
  h     text NOT NULL
);
-- A narrow heap: every wide value (body, tsv, title, url) is moved to TOAST (toast_tuple_target), so
-- the ids a GIN lookup yields are read from a few cached pages, never by decompressing the tsvector
-- (plain-lexeme tsqueries need no recheck); id, tags and title_tsv stay inline (MAIN).
ALTER TABLE documents SET (toast_tuple_target = 128);
ALTER TABLE documents ALTER COLUMN id SET STORAGE MAIN;
ALTER TABLE documents ALTER COLUMN tags SET STORAGE MAIN;
ALTER TABLE documents ALTER COLUMN title_tsv SET STORAGE MAIN;
CREATE INDEX documents_tsv ON documents USING gin (tsv);
CREATE INDEX documents_tags ON documents USING gin (tags);

-- The vocabulary: every term of the index with the number of documents holding it (`df`, for IDF
-- weights and for dropping common words from duplicate checks). Trigram index: typo candidates;
-- btree (C collation): exact and prefix lookups.
CREATE TABLE terms (
  term text COLLATE "C" PRIMARY KEY,
  df   integer NOT NULL
);
CREATE INDEX terms_trgm ON terms USING gin (term gin_trgm_ops);

-- Where the index stands (one row): the analysis format it was built with, whether a full build
-- finished (`complete`: a restart then reads nothing from the forum), the last event applied and
-- how many events were applied, and the number of documents (N of the IDF weights).
CREATE TABLE index_state (
  one      boolean PRIMARY KEY DEFAULT true CHECK (one),
  format   integer NOT NULL,
  complete boolean NOT NULL DEFAULT false,
  event_id text NOT NULL DEFAULT '',
  applied  bigint NOT NULL DEFAULT 0,
  docs     integer NOT NULL DEFAULT 0
);

-- Down Migration
DROP TABLE index_state;
DROP TABLE terms;
DROP TABLE documents;
