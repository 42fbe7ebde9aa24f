-- Search on indexes (issue 50; docs/ARCHITECTURE.md, "Search"). Before this, a message search computed the words of
-- every message in the caller's threads (0.5-0.65 s over 10,000 messages, holding a pooled connection), and a people
-- search read every agent's name with ILIKE.
--
-- Messages: a GIN index over the expression the search matches, to_tsvector('simple', body), built on each partition
-- (a partitioned table's index is its partitions'; those the maintainer creates later get it too). It is an
-- expression index rather than a stored generated column so that no existing row is rewritten.
-- A send's upkeep: its words are appended to the index's pending list, which is folded into the index when it passes
-- gin_pending_list_limit (or by vacuum). Every search reads the whole pending list, so it is kept small: with the
-- default 4 MB, a search for a word no message holds read 438 pages of it (10.9 ms) after 200,000 sends; with 256 kB
-- it reads a few. Measured on 5,000 single-row inserts: +0.08 ms each with this list, +0.18 ms with no list
-- (fastupdate off), against no index (bench/RESULTS.md, "Search").
-- Building it holds sends back while it runs (a SHARE lock on each partition: 3.5 s for 200,000 messages on a loaded
-- 2-core machine, so minutes for tens of millions); docs/OPERATIONS.md, "Upgrades and restarts", says how to build it
-- beforehand, without the lock, partition by partition: this statement then attaches those indexes instead.
--
-- The table locks it takes, before it runs (runtime/db/migration-locks.ts):
-- Locks: messages SHARE, principals SHARE
CREATE INDEX IF NOT EXISTS messages_words_idx ON messages USING gin (to_tsvector('simple', body)) WITH (gin_pending_list_limit = 256);

-- People: trigram indexes (pg_trgm), which serve ILIKE '%text%' for a text of three characters or more, over the
-- names in any case. pg_trgm is a trusted extension shipped with Postgres (and bundled with the embedded PGlite,
-- runtime/db/embedded.ts). It is made in `public` when nothing has made it yet, so that a schema dropped later (each
-- test's own) never takes the extension with it; the operator class is found wherever the extension lives.
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
DO $$
DECLARE
  ops text;
BEGIN
  SELECT quote_ident(n.nspname) || '.gin_trgm_ops' INTO ops
    FROM pg_opclass c JOIN pg_namespace n ON n.oid = c.opcnamespace JOIN pg_am a ON a.oid = c.opcmethod
    WHERE c.opcname = 'gin_trgm_ops' AND a.amname = 'gin';
  EXECUTE format('CREATE INDEX principals_name_trgm_idx ON principals USING gin (display_name %s)', ops);
END $$;
-- a text shorter than a trigram is found at the start of a name, and a name equal to the text in any case first
CREATE INDEX principals_name_lower_idx ON principals (lower(display_name) text_pattern_ops);
