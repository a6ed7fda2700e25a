package api

import "time"

// SharedLinkRequest is the body of POST /api/v1/sites/:id/shared-links.
type SharedLinkRequest struct {
	// Label says who the link is for (1 to 100 characters).
	Label string `json:"label"`
	// ShowRevenue shows the revenue card on the shared dashboard.
	ShowRevenue bool `json:"show_revenue,omitempty"`
}

// SharedLink is a link to a site's read-only dashboard as the API lists
// it: never its token, which only the creation's answer holds.
type SharedLink struct {
	ID          string    `json:"id"`
	Label       string    `json:"label"`
	ShowRevenue bool      `json:"show_revenue"`
	CreatedAt   time.Time `json:"created_at"`
}

// CreatedSharedLink is a new link with its URL and token, shown this once.
type CreatedSharedLink struct {
	SharedLink
	URL   string `json:"url"`
	Token string `json:"token"`
}

// CreatedSharedLinkResponse answers POST /api/v1/sites/:id/shared-links (201).
type CreatedSharedLinkResponse struct {
	Data CreatedSharedLink `json:"data"`
}

// SharedLinksResponse lists a site's shared links, oldest first.
type SharedLinksResponse struct {
	Data []SharedLink `json:"data"`
}
