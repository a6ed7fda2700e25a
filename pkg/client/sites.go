package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tally-analytics/tally/pkg/api"
)

// Sites lists the caller's sites.
func (c *Client) Sites(ctx context.Context) ([]api.Site, error) {
	var res api.SitesResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/sites", nil, nil, &res)
	return res.Data, err
}

// CreateSite adds a site owned by the caller.
func (c *Client) CreateSite(ctx context.Context, req api.SiteRequest) (api.Site, error) {
	var res api.SiteResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/sites", nil, req, &res)
	return res.Data, err
}

// Site returns one site.
func (c *Client) Site(ctx context.Context, id string) (api.Site, error) {
	var res api.SiteResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/sites/"+url.PathEscape(id), nil, nil, &res)
	return res.Data, err
}

// UpdateSite changes a site; empty fields keep their value.
func (c *Client) UpdateSite(ctx context.Context, id string, req api.SiteRequest) (api.Site, error) {
	var res api.SiteResponse
	err := c.do(ctx, http.MethodPut, "/api/v1/sites/"+url.PathEscape(id), nil, req, &res)
	return res.Data, err
}

// DeleteSite deletes a site; its data is removed in the background.
func (c *Client) DeleteSite(ctx context.Context, id string) (api.SiteDeletion, error) {
	var res api.SiteDeletion
	err := c.do(ctx, http.MethodDelete, "/api/v1/sites/"+url.PathEscape(id), nil, nil, &res)
	return res, err
}

// PurgeClientRevenue deletes the revenue the tracking script reported to a
// site and returns how many payments went.
func (c *Client) PurgeClientRevenue(ctx context.Context, id string) (int64, error) {
	var res api.ClientRevenuePurge
	err := c.do(ctx, http.MethodDelete, "/api/v1/sites/"+url.PathEscape(id)+"/client-revenue", nil, nil, &res)
	return res.Data.Purged, err
}
