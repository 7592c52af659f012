-- The feed of a key limited to some event types (issue 30) reads each of its types
-- from this index, as the type filter does: walking seq instead read every event of
-- the other types, without end for a key that may read only a rare type. It costs
-- every event written one more index entry, at the end of its type's range (so a
-- commit touches at most a page per type it writes): BenchmarkPlaceOrder measured no
-- change on one pet and about a fifth more store time per order spread over 1,000
-- pets (two events each), on a busy 2-core machine. PostgreSQL has had it since its
-- events began (events_type). Built at the upgrade: about 2.4 s over 2,000,000 events.

-- +goose Up
CREATE INDEX events_type ON events (type, seq);

-- +goose Down
DROP INDEX events_type;
