package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tally-analytics/tally/pkg/api"
)

// CreateFunnel adds a funnel.
func (c *Client) CreateFunnel(ctx context.Context, req api.FunnelRequest) (api.Funnel, error) {
	var res api.FunnelResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/funnels", nil, req, &res)
	return res.Data, err
}

// Funnels lists a site's funnels.
func (c *Client) Funnels(ctx context.Context, siteID string) ([]api.Funnel, error) {
	var res api.FunnelsResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/funnels", url.Values{"site_id": {siteID}}, nil, &res)
	return res.Data, err
}

// Funnel returns one funnel's definition.
func (c *Client) Funnel(ctx context.Context, id string) (api.Funnel, error) {
	var res api.FunnelResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/funnels/"+url.PathEscape(id), nil, nil, &res)
	return res.Data, err
}

// UpdateFunnel replaces a funnel's name, steps and window.
func (c *Client) UpdateFunnel(ctx context.Context, id string, req api.FunnelRequest) (api.Funnel, error) {
	var res api.FunnelResponse
	err := c.do(ctx, http.MethodPut, "/api/v1/funnels/"+url.PathEscape(id), nil, req, &res)
	return res.Data, err
}

// DeleteFunnel deletes a funnel.
func (c *Client) DeleteFunnel(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/funnels/"+url.PathEscape(id), nil, nil, nil)
}

// FunnelReport returns the funnel report of p.FunnelID for p's range and
// filters (CSV: c.CSV with report "funnel").
func (c *Client) FunnelReport(ctx context.Context, p StatsParams) (api.FunnelReportResponse, error) {
	return getStats[api.FunnelReportResponse](ctx, c, "funnel", p)
}
