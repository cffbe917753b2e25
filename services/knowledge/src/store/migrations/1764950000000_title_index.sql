-- Up Migration
-- GIN on the titles' terms (docs/adr/0215): a search whose words may match more documents than
-- EXACT_MATCHES takes, besides the matches among the newest documents, documents holding every
-- word in their title — found here without reading the matches of the body.
CREATE INDEX documents_title_tsv ON documents USING gin (title_tsv);

-- Down Migration
DROP INDEX documents_title_tsv;
