package api

import "time"

// SharedLinkRequest is the body of POST /api/v1/sites/:id/shared-links.
type SharedLinkRequest struct {
	// Label says who the link is for (1 to 100 characters).
	Label string `json:"label"`
	// ShowRevenue shows the revenue card on the shared dashboard.
	ShowRevenue bool `json:"show_revenue,omitempty"`
	// Password, when set, is asked of whoever opens the link (8 to 256
	// characters, as an account's password); empty: none.
	Password string `json:"password,omitempty"`
}

// SharedLinkPasswordRequest is the body of PUT
// /api/v1/sites/:id/shared-links/:link_id/password.
type SharedLinkPasswordRequest struct {
	// Password is the link's new password (8 to 256 characters).
	Password string `json:"password"`
}

// SharedLink is a link to a site's read-only dashboard as the API lists
// it: never its token, which only the creation's answer holds, nor its
// password or anything of it, but whether it has one.
type SharedLink struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	ShowRevenue bool   `json:"show_revenue"`
	// PasswordProtected: the link asks for a password.
	PasswordProtected bool      `json:"password_protected"`
	CreatedAt         time.Time `json:"created_at"`
}

// SharedLinkResponse answers a change of a link's password (200).
type SharedLinkResponse struct {
	Data SharedLink `json:"data"`
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
