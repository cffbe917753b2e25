-- Up Migration
-- Group commit of votes (docs/adr/0097): this migration created cast_votes and moved cast_vote's
-- lock order to post row first. Since docs/adr/0180 both live once, in store/functions/*.sql,
-- applied at every start after the migrations (cast_votes.sql, cast_vote.sql), so nothing is
-- created here any more (the former text is in git history).
SELECT 1;

-- Down Migration
SELECT 1;
