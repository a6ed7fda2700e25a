-- Whether an event's visitor id is stable: the client's own (the tracking
-- script's analytics_vid, or an Events API sender's visitor_id), which
-- the visitor keeps from day to day, or 0 for an id made of the day's salt,
-- the address and the user agent, which changes every UTC day. Only a
-- stable id can return on a later day, so the retention report counts the
-- visitors of stable ids alone (internal/stats/retention.go). Rows written
-- before this migration read 0: tally did not know.
ALTER TABLE events ADD COLUMN stable_visitor UInt8;
