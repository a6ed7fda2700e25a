// Package sharing holds the rules of shared links: a site's dashboard,
// read-only, for whoever holds a secret URL. Owners and admins make and
// delete them (the right to change the site's settings); the URL's token is
// shown once and kept only as its hash, as an API key's secret is; a link
// opens its own site's statistics and nothing else. A link may also ask for
// a password (see password.go).
package sharing

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// Limits of shared links.
const (
	// MaxPerSite is the most links a site may have (each is a way in to
	// its statistics: a few, each with a label saying who has it).
	MaxPerSite = 20
	// MaxLabelLen is the longest label, in characters.
	MaxLabelLen = 100
)

// Store keeps shared links.
type Store interface {
	CreateSharedLink(ctx context.Context, l model.SharedLink, tokenHash []byte, limit int) (model.SharedLink, error)
	SharedLinksBySite(ctx context.Context, site model.SiteID) ([]model.SharedLink, error)
	SharedLinkByHash(ctx context.Context, tokenHash []byte) (model.SharedLink, error)
	SetSharedLinkPassword(ctx context.Context, site model.SiteID, id model.SharedLinkID, hash string) (model.SharedLink, error)
	DeleteSharedLink(ctx context.Context, site model.SiteID, id model.SharedLinkID) error
}

// Hasher hashes and checks passwords (auth.Passwords: argon2id, as for
// accounts).
type Hasher interface {
	Hash(ctx context.Context, password string) (string, error)
	Check(ctx context.Context, password, hash string) (bool, error)
}

// Sites answers whether a principal may do an action to a site (the
// accounts' guard).
type Sites interface {
	Check(ctx context.Context, p auth.Principal, id model.SiteID, a accounts.Action) (model.Site, model.Role, error)
}

// Service manages shared links and opens them.
type Service struct {
	store  Store
	sites  Sites
	hasher Hasher
	// accessKey signs the proofs that a browser gave a link's password
	accessKey []byte
	now       func() time.Time
}

// NewService wires the sharing service. secret is the server's signing
// secret (TALLY_JWT_SECRET), from which the key of the access cookies of
// links with a password is derived; now is the clock they expire by.
func NewService(store Store, sites Sites, hasher Hasher, secret string, now func() time.Time) *Service {
	return &Service{store: store, sites: sites, hasher: hasher, accessKey: accessKey(secret), now: now}
}

// Input is a new link as a client sends it.
type Input struct {
	Label       string
	ShowRevenue bool
	// Password, when not empty, is asked of whoever opens the link.
	Password string
}

// Created is a new link with its token, which is never available again.
type Created struct {
	Link  model.SharedLink
	Token string
}

// NotFound is how a link that does not exist (or is of another site) is
// answered.
func NotFound() *errs.Error {
	return errs.E(errs.NotFound, "shared_link_not_found", "shared link not found")
}

// URL is the address of a link's dashboard on the server at base (the
// public URL, or the request's origin).
func URL(base, token string) string { return strings.TrimSuffix(base, "/") + Path(token) }

// PathPrefix starts the path of every shared dashboard and its cards.
const PathPrefix = "/share/"

// Path is the path of the shared dashboard of token.
func Path(token string) string { return PathPrefix + token }

// manageable checks that p may manage the links of site: whoever may change
// the site's settings.
func (s *Service) manageable(ctx context.Context, p auth.Principal, site model.SiteID) error {
	_, _, err := s.sites.Check(ctx, p, site, accounts.ManageSite)
	return err
}

// List lists a site's links, oldest first (never their tokens).
func (s *Service) List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.SharedLink, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return nil, err
	}
	return s.store.SharedLinksBySite(ctx, site)
}

// Create makes a link to a site's dashboard; its token is in the answer
// only.
func (s *Service) Create(ctx context.Context, p auth.Principal, site model.SiteID, in Input) (Created, error) {
	if err := s.manageable(ctx, p, site); err != nil {
		return Created{}, err
	}
	label := strings.TrimSpace(in.Label)
	if label == "" || utf8.RuneCountInString(label) > MaxLabelLen || strings.ContainsFunc(label, unicode.IsControl) {
		return Created{}, errs.InvalidField("label", "must be 1 to %d characters, none of them control characters", MaxLabelLen)
	}
	var pwHash string
	if in.Password != "" {
		var err error
		if pwHash, err = s.hashPassword(ctx, in.Password); err != nil {
			return Created{}, err
		}
	}
	token, hash := auth.NewLinkToken()
	link, err := s.store.CreateSharedLink(ctx, model.SharedLink{SiteID: site, Label: label, ShowRevenue: in.ShowRevenue,
		CreatedBy: p.UserID, PasswordHash: pwHash}, hash, MaxPerSite)
	switch {
	case errors.Is(err, errs.ErrConflict):
		return Created{}, errs.E(errs.Conflict, "too_many_shared_links", "a site has at most %d shared links; delete one first",
			MaxPerSite).WithField("site_id")
	case errors.Is(err, errs.ErrNotFound): // the site went meanwhile
		return Created{}, errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	case err != nil:
		return Created{}, err
	}
	return Created{Link: link, Token: token}, nil
}

// Delete deletes a link of a site: its URL opens nothing from now on.
func (s *Service) Delete(ctx context.Context, p auth.Principal, site model.SiteID, id model.SharedLinkID) error {
	if err := s.manageable(ctx, p, site); err != nil {
		return err
	}
	err := s.store.DeleteSharedLink(ctx, site, id)
	if errors.Is(err, errs.ErrNotFound) {
		return NotFound()
	}
	return err
}

// Opened is a link being visited: the link, its site, and the principal
// its visitor reads the site's statistics as.
type Opened struct {
	Link      model.SharedLink
	Site      model.Site
	Principal auth.Principal
}

// Open opens the link of a token to a visitor who holds access (the Value
// of an Access that Unlock gave, or ""): a link with a password opens only
// with an unexpired access of its current password, else it is Locked. A malformed token, an
// unknown one and one of a deleted link are the same NotFound; the token is
// looked up by its hash, so the time taken says nothing of how near a guess
// came.
func (s *Service) Open(ctx context.Context, token, access string) (Opened, error) {
	o, err := s.find(ctx, token)
	if err != nil {
		return Opened{}, err
	}
	if !s.admits(o.Link, access) {
		return Opened{}, Locked()
	}
	return o, nil
}

// find finds the link of a token and its site, whether or not it asks for
// a password.
func (s *Service) find(ctx context.Context, token string) (Opened, error) {
	if !auth.LinkTokenWellFormed(token) {
		return Opened{}, NotFound()
	}
	link, err := s.store.SharedLinkByHash(ctx, auth.HashKey(token))
	if errors.Is(err, errs.ErrNotFound) {
		return Opened{}, NotFound()
	}
	if err != nil {
		return Opened{}, err
	}
	p := auth.ForSharedLink(link.SiteID)
	site, _, err := s.sites.Check(ctx, p, link.SiteID, accounts.ReadStats)
	if errs.KindOf(err) == errs.NotFound {
		return Opened{}, NotFound()
	}
	if err != nil {
		return Opened{}, err
	}
	return Opened{Link: link, Site: site, Principal: p}, nil
}
