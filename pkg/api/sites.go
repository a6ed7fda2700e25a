package api

import "time"

// SiteRequest is the body of POST /api/v1/sites and PUT /api/v1/sites/:id.
// On PUT, fields left out keep their value.
type SiteRequest struct {
	Domain        string                `json:"domain,omitempty"`
	Timezone      string                `json:"timezone,omitempty"`
	BaseCurrency  string                `json:"base_currency,omitempty"`
	ClientRevenue *ClientRevenueRequest `json:"client_revenue,omitempty"`
	// ExcludedPages, ExcludedAddresses and ExcludedHosts replace the
	// site's lists of exclusions (see Site); an empty list clears one.
	ExcludedPages     *[]string `json:"excluded_pages,omitempty"`
	ExcludedAddresses *[]string `json:"excluded_addresses,omitempty"`
	ExcludedHosts     *[]string `json:"excluded_hosts,omitempty"`
}

// ClientRevenueRequest changes a site's client revenue policy; fields left
// out keep their value.
type ClientRevenueRequest struct {
	Included *bool  `json:"included,omitempty"`
	Cap      *int64 `json:"cap,omitempty"`
}

// Site is a site as the API returns it, with the caller's role on it.
type Site struct {
	SiteID        string        `json:"site_id"`
	Domain        string        `json:"domain"`
	Timezone      string        `json:"timezone"`
	BaseCurrency  string        `json:"base_currency"`
	ClientRevenue ClientRevenue `json:"client_revenue"`
	// The exclusions are the owners' and admins' to see (the addresses
	// may be a team's own): nil for a viewer.
	//
	// ExcludedPages are page patterns (goals' page_path: * one path
	// segment, ** any depth, a hash route after #) whose events the site
	// keeps out of its statistics.
	ExcludedPages *[]string `json:"excluded_pages,omitempty"`
	// ExcludedAddresses are visitors' IP addresses or CIDR ranges kept out.
	ExcludedAddresses *[]string `json:"excluded_addresses,omitempty"`
	// ExcludedHosts are hostnames of the page's URL kept out: exact, or
	// *.suffix for every host under suffix.
	ExcludedHosts *[]string `json:"excluded_hosts,omitempty"`
	Role          string    `json:"role"`
	CreatedAt     time.Time `json:"created_at"`
}

// ClientRevenue is a site's policy for revenue the tracking script reports
// (unsigned: anyone who knows the site id can send it).
type ClientRevenue struct {
	// Included counts it in the revenue figures; else reports show it apart
	// as client_reported.
	Included bool `json:"included"`
	// Cap is the most one event may report, in minor units of the base
	// currency; 0 refuses all of it.
	Cap int64 `json:"cap"`
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

// ClientRevenuePurge answers DELETE /api/v1/sites/:id/client-revenue: the
// payments the tracking script reported to the site are gone from the ledger
// and the revenue reports.
type ClientRevenuePurge struct {
	Data struct {
		SiteID string `json:"site_id"`
		Purged int64  `json:"purged"` // payments deleted
	} `json:"data"`
}
