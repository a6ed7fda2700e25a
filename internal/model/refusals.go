package model

import "time"

// Why an event was refused, as a site's tracking health counts it. Each
// refused event counts once, under the first reason it met.
const (
	RefusedInvalidPayload = "invalid_payload" // not JSON, a field missing or malformed, revenue refused
	RefusedInvalidProps   = "invalid_props"   // props breaking their rules
	RefusedBodyTooLarge   = "body_too_large"  // the request body was over its limit (413)
	RefusedHostMismatch   = "host_mismatch"   // /e: the page is not on the site's domain
	RefusedRateLimited    = "rate_limited"    // a limit answered 429
	RefusedOverWALBudget  = "over_wal_budget" // the write-ahead log was at its disk budget (503)
	RefusedUnavailable    = "unavailable"     // a store the request needed was down, or the server was stopping (503)
)

// Excluded is not a refusal: the events it counts matched their site's
// exclusions and were answered as if stored. They are counted with the
// refusals (one more reason in ingest_refusals) and reported apart.
const Excluded = "excluded"

// RefusalReasons lists every reason, in the order reports show ties.
var RefusalReasons = []string{RefusedInvalidPayload, RefusedInvalidProps, RefusedBodyTooLarge, RefusedHostMismatch,
	RefusedRateLimited, RefusedOverWALBudget, RefusedUnavailable}

// RefusalBucket is the span refusals are counted in: a quarter of an hour,
// so that a day in any time zone (all offsets are whole quarters) is made
// of whole buckets.
const RefusalBucket = 15 * time.Minute

// RefusalRow is one row of the ClickHouse ingest_refusals table: the events
// of a site refused for one reason within one bucket.
type RefusalRow struct {
	SiteID SiteID
	Bucket time.Time // start of the bucket, UTC
	Reason string
	Events uint64
}
