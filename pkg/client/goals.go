package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tally-analytics/tally/pkg/api"
)

// CreateGoal adds a goal.
func (c *Client) CreateGoal(ctx context.Context, req api.GoalRequest) (api.Goal, error) {
	var res api.GoalResponse
	err := c.do(ctx, http.MethodPost, "/api/v1/goals", nil, req, &res)
	return res.Data, err
}

// Goals lists a site's goals.
func (c *Client) Goals(ctx context.Context, siteID string) ([]api.Goal, error) {
	var res api.GoalsResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/goals", url.Values{"site_id": {siteID}}, nil, &res)
	return res.Data, err
}

// Goal returns one goal.
func (c *Client) Goal(ctx context.Context, id string) (api.Goal, error) {
	var res api.GoalResponse
	err := c.do(ctx, http.MethodGet, "/api/v1/goals/"+url.PathEscape(id), nil, nil, &res)
	return res.Data, err
}

// UpdateGoal replaces a goal's name, type and target.
func (c *Client) UpdateGoal(ctx context.Context, id string, req api.GoalRequest) (api.Goal, error) {
	var res api.GoalResponse
	err := c.do(ctx, http.MethodPut, "/api/v1/goals/"+url.PathEscape(id), nil, req, &res)
	return res.Data, err
}

// DeleteGoal deletes a goal.
func (c *Client) DeleteGoal(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "/api/v1/goals/"+url.PathEscape(id), nil, nil, nil)
}

// Conversions returns the conversions of every goal of a site.
func (c *Client) Conversions(ctx context.Context, p StatsParams) (api.ConversionsResponse, error) {
	return get[api.ConversionsResponse](ctx, c, "/api/v1/goals/conversions", p)
}
