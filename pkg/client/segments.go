package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tally-analytics/tally/pkg/api"
)

func segmentsPath(siteID string) string {
	return "/api/v1/sites/" + url.PathEscape(siteID) + "/segments"
}

// Segments lists a site's segments by name.
func (c *Client) Segments(ctx context.Context, siteID string) ([]api.Segment, error) {
	var res api.SegmentsResponse
	err := c.do(ctx, http.MethodGet, segmentsPath(siteID), nil, nil, &res)
	return res.Data, err
}

// CreateSegment saves a set of filters of a site under a name; a stats
// request applies it with StatsParams.Segment.
func (c *Client) CreateSegment(ctx context.Context, siteID string, req api.SegmentRequest) (api.Segment, error) {
	var res api.SegmentResponse
	err := c.do(ctx, http.MethodPost, segmentsPath(siteID), nil, req, &res)
	return res.Data, err
}

// UpdateSegment renames a segment, or replaces its filters, or both.
func (c *Client) UpdateSegment(ctx context.Context, siteID, segmentID string, ch api.SegmentChange) (api.Segment, error) {
	var res api.SegmentResponse
	err := c.do(ctx, http.MethodPatch, segmentsPath(siteID)+"/"+url.PathEscape(segmentID), nil, ch, &res)
	return res.Data, err
}

// DeleteSegment deletes a segment.
func (c *Client) DeleteSegment(ctx context.Context, siteID, segmentID string) error {
	return c.do(ctx, http.MethodDelete, segmentsPath(siteID)+"/"+url.PathEscape(segmentID), nil, nil, nil)
}
