package api

import "time"

// SiteRequest is the body of POST /api/v1/sites and PUT /api/v1/sites/:id.
// On PUT, fields left out keep their value.
type SiteRequest struct {
	Domain       string `json:"domain,omitempty"`
	Timezone     string `json:"timezone,omitempty"`
	BaseCurrency string `json:"base_currency,omitempty"`
}

// Site is a site as the API returns it, with the caller's role on it.
type Site struct {
	SiteID       string    `json:"site_id"`
	Domain       string    `json:"domain"`
	Timezone     string    `json:"timezone"`
	BaseCurrency string    `json:"base_currency"`
	Role         string    `json:"role"`
	CreatedAt    time.Time `json:"created_at"`
}

// SiteResponse wraps one site.
type SiteResponse struct {
	Data Site `json:"data"`
}

// SitesResponse lists the caller's sites.
type SitesResponse struct {
	Data []Site `json:"data"`
}

// SiteDeletion answers DELETE /api/v1/sites/:id (202): the site is gone at
// once; its statistics, payments and realtime state are removed in the
// background.
type SiteDeletion struct {
	Data struct {
		SiteID string `json:"site_id"`
		Status string `json:"status"` // "deleting"
	} `json:"data"`
	Message string `json:"message"`
}
