package client

import (
	"context"
	"net/http"

	"github.com/tally-analytics/tally/pkg/api"
)

// Payment records a payment or refund (POST /api/v1/stats/payments). A
// repeated transaction_id answers Duplicate with the first payment's id.
func (c *Client) Payment(ctx context.Context, req api.PaymentRequest) (api.PaymentResponse, error) {
	var res api.PaymentResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/stats/payments", nil, req, &res)
	return res, err
}

// Revenue returns the revenue report (p.Breakdown and p.Model optional).
func (c *Client) Revenue(ctx context.Context, p StatsParams) (api.RevenueResponse, error) {
	return getStats[api.RevenueResponse](ctx, c, "revenue", p)
}

// RevenueBy returns the revenue report broken down by source, page,
// campaign, country or device, for the last_touch (default) or first_touch model.
func (c *Client) RevenueBy(ctx context.Context, p StatsParams, breakdown, model string) (api.RevenueResponse, error) {
	p.Breakdown, p.Model = breakdown, model
	return c.Revenue(ctx, p)
}
