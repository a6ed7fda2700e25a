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

// Revenue returns the revenue report (p.Breakdown and p.Attribution optional).
func (c *Client) Revenue(ctx context.Context, p StatsParams) (api.RevenueResponse, error) {
	return getStats[api.RevenueResponse](ctx, c, "revenue", p)
}

// RevenueBy returns the revenue report broken down by source, page,
// campaign, country or device, for an attribution model: last_non_direct
// ("" is the default, this one), last_touch (the last visit, direct
// included) or first_touch. Before attribution models, this argument was
// the model parameter, whose last_touch meant last_non_direct.
func (c *Client) RevenueBy(ctx context.Context, p StatsParams, breakdown, attribution string) (api.RevenueResponse, error) {
	p.Breakdown, p.Attribution = breakdown, attribution
	return c.Revenue(ctx, p)
}
