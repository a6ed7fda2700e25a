package api

import "encoding/json"

// PaymentRequest is the body of POST /api/v1/stats/payments. amount is an
// integer of minor units (4999 = 49.99); a negative amount or type "refund"
// records a refund. transaction_id deduplicates (generated when absent); a
// refund with the transaction_id of a payment is linked to it.
type PaymentRequest struct {
	SiteID        string          `json:"site_id"`
	Amount        Number          `json:"amount"`
	Currency      string          `json:"currency"`
	VisitorID     string          `json:"visitor_id,omitempty"`
	Timestamp     string          `json:"timestamp,omitempty"`
	EventName     string          `json:"event_name,omitempty"`
	Metadata      json.RawMessage `json:"metadata,omitempty"`
	Type          string          `json:"type,omitempty"`
	TransactionID string          `json:"transaction_id,omitempty"`
}

// PaymentResponse answers a recorded payment: 201 the first time, 200 with
// duplicate true and the first payment's id for a repeated transaction_id.
type PaymentResponse struct {
	Success   bool   `json:"success"`
	PaymentID string `json:"payment_id"`
	Duplicate bool   `json:"duplicate"`
}

// WebhookResponse answers a provider's notification.
type WebhookResponse struct {
	Received  bool   `json:"received"`
	Ignored   bool   `json:"ignored,omitempty"`
	Reason    string `json:"reason,omitempty"`
	PaymentID string `json:"payment_id,omitempty"`
	Duplicate bool   `json:"duplicate,omitempty"`
}
