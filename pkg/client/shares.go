package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tally-analytics/tally/pkg/api"
)

// SharedLinks lists a site's shared links (never their tokens).
func (c *Client) SharedLinks(ctx context.Context, siteID string) ([]api.SharedLink, error) {
	var res api.SharedLinksResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/sites/"+url.PathEscape(siteID)+"/shared-links", nil, nil, &res)
	return res.Data, err
}

// CreateSharedLink makes a link to a site's read-only dashboard; the answer
// holds its URL and token, which are never available again.
func (c *Client) CreateSharedLink(ctx context.Context, siteID string, req api.SharedLinkRequest) (api.CreatedSharedLink, error) {
	var res api.CreatedSharedLinkResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/sites/"+url.PathEscape(siteID)+"/shared-links", nil, req, &res)
	return res.Data, err
}

// SetSharedLinkPassword gives a shared link a password, or a new one: every
// browser that opened it before must give this one.
func (c *Client) SetSharedLinkPassword(ctx context.Context, siteID, linkID, password string) (api.SharedLink, error) {
	var res api.SharedLinkResponse
	err := c.do(ctx, http.MethodPut, sharedLinkPath(siteID, linkID)+"/password", nil, api.SharedLinkPasswordRequest{Password: password}, &res)
	return res.Data, err
}

// RemoveSharedLinkPassword opens a shared link to whoever has its URL again.
func (c *Client) RemoveSharedLinkPassword(ctx context.Context, siteID, linkID string) (api.SharedLink, error) {
	var res api.SharedLinkResponse
	err := c.do(ctx, http.MethodDelete, sharedLinkPath(siteID, linkID)+"/password", nil, nil, &res)
	return res.Data, err
}

func sharedLinkPath(siteID, linkID string) string {
	return "/api/v1/sites/" + url.PathEscape(siteID) + "/shared-links/" + url.PathEscape(linkID)
}

// DeleteSharedLink deletes a shared link: its URL opens nothing from now on.
func (c *Client) DeleteSharedLink(ctx context.Context, siteID, linkID string) error {
	return c.do(ctx, http.MethodDelete, sharedLinkPath(siteID, linkID), nil, nil, nil)
}
