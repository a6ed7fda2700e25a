package revenue

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/money"
)

// Sites answers whether a principal may do an action to a site (the
// accounts' guard).
type Sites interface {
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// PaymentInput is a payment as the payments API receives it.
type PaymentInput struct {
	SiteID        string
	Amount        string // an integer of minor units, as sent
	Currency      string
	VisitorID     string
	Timestamp     string // RFC 3339; empty = now
	EventName     string
	Metadata      json.RawMessage
	Type          string // "payment" or "refund"; empty = by the amount's sign
	TransactionID string // deduplication id; generated when empty
}

const (
	maxMetadataBytes  = 16 << 10
	maxTransactionLen = 255
)

// RecordAPI validates and records a payment sent to POST /api/v1/stats/payments.
func (s *Service) RecordAPI(ctx context.Context, sites Sites, p auth.Principal, in PaymentInput) (Recorded, error) {
	if err := p.Require(model.ScopeEventsWrite); err != nil {
		return Recorded{}, err
	}
	inc, err := s.validateAPI(in)
	if err != nil {
		return Recorded{}, err
	}
	site, _, err := sites.Check(ctx, p, model.SiteID(in.SiteID), accounts.SendPayments)
	if err != nil {
		return Recorded{}, err
	}
	inc.Site = site
	return s.Record(ctx, inc)
}

func (s *Service) validateAPI(in PaymentInput) (Incoming, error) {
	inc := Incoming{Provider: model.ProviderAPI, EmitEvent: in.EventName != ""}
	if strings.TrimSpace(in.SiteID) == "" {
		return inc, errs.InvalidField("site_id", "site_id is required")
	}
	if in.Amount == "" {
		return inc, errs.InvalidField("amount", "amount is required (an integer of minor units, such as 4999 for 49.99)")
	}
	amount, err := strconv.ParseInt(in.Amount, 10, 64)
	if err != nil || amount == 0 {
		return inc, errs.InvalidField("amount", "must be a non-zero integer of minor units (cents), such as 4999")
	}
	inc.Currency = strings.ToUpper(strings.TrimSpace(in.Currency))
	if inc.Currency == "" {
		return inc, errs.InvalidField("currency", "currency is required (ISO 4217, such as EUR)")
	}
	if !money.ValidCurrency(inc.Currency) {
		return inc, errs.InvalidField("currency", "must be an ISO 4217 currency code such as EUR")
	}
	switch in.Type {
	case "", string(model.KindPayment):
		inc.Kind = model.KindPayment
		if amount < 0 {
			if in.Type != "" {
				return inc, errs.InvalidField("type", "a payment cannot have a negative amount; use type refund")
			}
			inc.Kind = model.KindRefund
		}
	case string(model.KindRefund):
		inc.Kind = model.KindRefund
	default:
		return inc, errs.InvalidField("type", "must be payment or refund")
	}
	inc.Amount = max(amount, -amount)
	inc.OccurredAt = s.now()
	if in.Timestamp != "" {
		t, err := time.Parse(time.RFC3339, in.Timestamp)
		if err != nil {
			return inc, errs.InvalidField("timestamp", "must be an RFC 3339 time such as 2026-05-04T10:00:00Z")
		}
		inc.OccurredAt = t
	}
	if in.EventName != "" && !model.EventNameFits(in.EventName) || in.EventName == model.PageviewName {
		return inc, errs.InvalidField("event_name", "must be 1 to %d characters and not pageview", model.MaxEventNameLen)
	}
	inc.EventName = in.EventName
	if len(in.VisitorID) > 128 {
		return inc, errs.InvalidField("visitor_id", "must be at most 128 characters")
	}
	if err := s.metadata(&inc, in.Metadata); err != nil {
		return inc, err
	}
	if in.VisitorID != "" {
		inc.ClientVisitorID = in.VisitorID
	}
	inc.TransactionID = strings.TrimSpace(in.TransactionID)
	named := inc.TransactionID != ""
	if !named {
		inc.TransactionID = uuid.NewString()
	}
	if len(inc.TransactionID) > maxTransactionLen {
		return inc, errs.InvalidField("transaction_id", "must be at most %d characters", maxTransactionLen)
	}
	inc.PaymentRef = inc.TransactionID
	if inc.Kind == model.KindRefund && named {
		// a refund names the payment it undoes by its transaction id; one
		// without names none, and waits for no payment
		inc.RefundOf = inc.TransactionID
	}
	return inc, nil
}

// metadata keeps the free-form metadata (a JSON object) and reads the
// visitor id a checkout may carry in it.
func (s *Service) metadata(inc *Incoming, raw json.RawMessage) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > maxMetadataBytes {
		return errs.InvalidField("metadata", "must be at most %d bytes of JSON", maxMetadataBytes)
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		return errs.InvalidField("metadata", "must be a JSON object")
	}
	inc.Metadata = raw
	inc.ClientVisitorID = visitorFromMetadata(obj)
	return nil
}

// visitorFromMetadata reads the tracker's visitor id a merchant passed
// through checkout metadata.
func visitorFromMetadata(obj map[string]any) string {
	for _, k := range []string{"analytics_vid", "visitor_id"} {
		if v, ok := obj[k].(string); ok && v != "" && len(v) <= 128 {
			return v
		}
	}
	return ""
}
