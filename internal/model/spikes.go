package model

import "time"

// SpikeRecipientID identifies an address a site's traffic spike
// notifications go to (a UUID string).
type SpikeRecipientID string

// SpikeRecipient is an email address that is mailed when a site's traffic
// spikes. The address is personal data of the site's team: kept in
// Postgres only, and never logged.
type SpikeRecipient struct {
	ID     SpikeRecipientID
	SiteID SiteID
	// Email is lower-case.
	Email     string
	CreatedAt time.Time
}

// SpikeNotification is a site's traffic spike notification: the number of
// current visitors that sets it off, the addresses it goes to (by
// address), and when it last went (zero: never).
type SpikeNotification struct {
	SiteID     SiteID
	Threshold  int
	LastSentAt time.Time
	Recipients []SpikeRecipient
}
