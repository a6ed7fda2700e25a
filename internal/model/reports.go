package model

import "time"

// ReportRecipientID identifies a recipient of a site's email reports (a
// UUID string).
type ReportRecipientID string

// ReportKind is the period an email report covers.
type ReportKind string

// The email reports' periods: the week from Monday to Sunday, sent on the
// Monday after; the calendar month, sent on the 1st after. Both in the
// site's time zone.
const (
	ReportWeekly  ReportKind = "weekly"
	ReportMonthly ReportKind = "monthly"
)

// ReportRecipient is an email address that gets a site's reports. The
// address is personal data of the site's team: kept in Postgres only, and
// never logged.
type ReportRecipient struct {
	ID     ReportRecipientID
	SiteID SiteID
	// Email is lower-case.
	Email           string
	Weekly, Monthly bool
	CreatedAt       time.Time
}

// Gets reports whether r is sent the reports of kind.
func (r ReportRecipient) Gets(kind ReportKind) bool {
	return (kind == ReportWeekly && r.Weekly) || (kind == ReportMonthly && r.Monthly)
}

// ReportSubscription is a recipient with the time zone of its site, whose
// days its reports' periods are.
type ReportSubscription struct {
	Recipient ReportRecipient
	Timezone  string
}

// ReportDelivery names one report to one recipient: a recipient, a kind and
// the first day of its period (a date at 00:00 UTC).
type ReportDelivery struct {
	Recipient   ReportRecipientID
	Kind        ReportKind
	PeriodStart time.Time
}

// ReportAttempt is a delivery claimed for one attempt: its id, and which
// attempt it is (from 1).
type ReportAttempt struct {
	ID      string
	Attempt int
}
