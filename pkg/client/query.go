package client

import (
	"context"
	"net/http"

	"github.com/tally-analytics/tally/pkg/api"
)

// Query runs a query of the Plausible-compatible Stats API v2
// (POST /api/v2/query).
func (c *Client) Query(ctx context.Context, q api.QueryRequest) (api.QueryResponse, error) {
	var out api.QueryResponse
	err := c.do(ctx, http.MethodPost, "/api/v2/query", nil, q, &out)
	return out, err
}
