package model

import "time"

// PaymentKind tells a payment from a refund and a failed attempt.
type PaymentKind string

// Payment kinds.
const (
	KindPayment PaymentKind = "payment"
	KindRefund  PaymentKind = "refund"
	KindFailed  PaymentKind = "failed" // recorded, never revenue
)

// Touch is where a paying visitor came from in one session.
type Touch struct {
	Source      string `json:"source"`
	SourceType  string `json:"source_type"`
	EntryPage   string `json:"entry_page"`
	UTMSource   string `json:"utm_source,omitempty"`
	UTMMedium   string `json:"utm_medium,omitempty"`
	UTMCampaign string `json:"utm_campaign,omitempty"`
	UTMContent  string `json:"utm_content,omitempty"`
	CountryCode string `json:"country_code,omitempty"`
	Device      string `json:"device,omitempty"`
}

// Touch is the attribution a as a touch of a visit entering at entry.
func (a Attribution) Touch(entry string) Touch {
	return Touch{Source: a.ReferrerSource, SourceType: a.SourceType, EntryPage: entry, UTMSource: a.UTMSource,
		UTMMedium: a.UTMMedium, UTMCampaign: a.UTMCampaign, UTMContent: a.UTMContent, CountryCode: a.CountryCode,
		Device: a.Device}
}

// Attribution is the part of an event's attribution a touch holds (the
// inverse of Attribution.Touch, less the entry page).
func (t Touch) Attribution() Attribution {
	return Attribution{ReferrerSource: t.Source, SourceType: t.SourceType, UTMSource: t.UTMSource, UTMMedium: t.UTMMedium,
		UTMCampaign: t.UTMCampaign, UTMContent: t.UTMContent, CountryCode: t.CountryCode, Device: t.Device}
}

// PaymentAttribution is where a payment's visitor came from, for each
// attribution model of the revenue report: the last session before it that
// is not direct (no source and no campaign parameter; the rule is
// revenue's), else the last session, the last session before it (direct
// included), and the first session.
type PaymentAttribution struct {
	LastNonDirect Touch `json:"last"`
	First         Touch `json:"first"`
	// Latest is the last session, direct included. Ledger rows recorded
	// before it was kept have none: LastTouch then answers LastNonDirect.
	Latest *Touch `json:"last_touch,omitempty"`
}

// LastTouch is the touch of the last session before the payment, direct
// included; for a payment recorded before tally kept it, the last
// non-direct touch (the best it knows).
func (a PaymentAttribution) LastTouch() Touch {
	if a.Latest != nil {
		return *a.Latest
	}
	return a.LastNonDirect
}

// Sources of payments that are not a payment provider's webhook.
const (
	ProviderAPI    = "api"    // the payments API
	ProviderEvents = "events" // revenue of a custom event sent to the Events API
	// ProviderTracker is revenue the tracking script reported: unsigned,
	// anyone who knows the site id can send it. Reports keep it apart from
	// verified revenue unless the site includes it (Site.ClientRevenue).
	ProviderTracker = "tracker"
)

// SubscriptionKeyPrefix starts the keys that link a subscription to the
// visitor of the checkout that created it, kept beside the checkout
// sessions' claims. No provider's checkout session id has this form, and no
// event may claim such a key (its claims would take the subscription's
// renewals, and would never expire).
const SubscriptionKeyPrefix = "subscription:"

// CheckoutClaim is a visitor's claim of a checkout session: the tracking
// script saw its id in the URL of one of their pages at At.
type CheckoutClaim struct {
	Visitor uint64
	At      time.Time
}

// Payment is one entry of the payments ledger. Amounts are minor units.
type Payment struct {
	ID            string
	SiteID        SiteID
	Provider      string // ProviderAPI, ProviderEvents, ProviderTracker, or a provider_x
	TransactionID string
	Kind          PaymentKind
	Amount        int64 // positive, minor units of Currency
	Currency      string
	OccurredAt    time.Time
	PaymentRef    string // the provider's id refunds reference
	RefundOf      string // for a refund: the ledger id of the payment it undoes
	// Reinstatement, for a payment: money a won dispute brought back, whose
	// chargeback is a refund of the payment known as PaymentRef. A running
	// refund total counts neither, so the two are netted when one is settled.
	Reinstatement bool
	VisitorID     uint64 // 0 = unknown
	EventName     string
	Metadata      []byte // JSON, as sent
	BaseCurrency  string
	BaseAmount    *int64 // nil while the rate is missing
	FXRate        string // base units per unit of Currency, as a decimal
	FXDay         *time.Time
	Attribution   *PaymentAttribution // nil = unattributed
	// HeldUntil: a refund of a payment the ledger does not hold yet is not
	// exported before then, unless its payment arrives first. nil: not held.
	HeldUntil *time.Time
	CreatedAt time.Time
}

// SessionTouch is when a session started and where it came from.
type SessionTouch struct {
	Start time.Time
	Touch Touch
}

// Rate is an exchange rate: units of Currency per 1 EUR on Day, as a decimal.
type Rate struct {
	Currency string
	Day      time.Time
	Rate     string
}
