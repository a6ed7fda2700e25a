package model

import "time"

// SharedLinkID identifies a shared link (a UUID string).
type SharedLinkID string

// SharedLink publishes one site's dashboard, read-only, to whoever holds its
// URL. The URL's token is never stored: only its hash, by which it is found.
type SharedLink struct {
	ID     SharedLinkID
	SiteID SiteID
	Label  string
	// ShowRevenue shows the revenue card (and revenue in the funnel card).
	ShowRevenue bool
	// CreatedBy is the user who made it; empty once their account is gone.
	CreatedBy UserID
	CreatedAt time.Time
	// PasswordHash is the argon2id hash of the link's password; empty when
	// the link has none. It never leaves the server.
	PasswordHash string
}

// Protected reports whether the link asks for a password.
func (l SharedLink) Protected() bool { return l.PasswordHash != "" }
