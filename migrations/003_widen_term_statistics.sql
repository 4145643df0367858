-- Keyword search weighs each query term by its inverse document frequency, read from the
-- planner's statistics (pg_stats.most_common_elems of memories.tsv) instead of counting
-- matches per query. A higher statistics target makes ANALYZE track more lexemes there
-- (about ten times the target); terms it does not track are rare enough to weigh fully.
ALTER TABLE memories ALTER COLUMN tsv SET STATISTICS 1000;
