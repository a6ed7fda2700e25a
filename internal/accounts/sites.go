package accounts

import (
	"context"
	"errors"
	"net"
	"strings"

	"github.com/bojanz/currency"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// idAlphabet is used for public identifiers: lowercase so they read well in URLs.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// NewSite is the input of CreateSite.
type NewSite struct {
	OwnerEmail   string
	Domain       string
	Timezone     string // IANA name; empty = UTC
	BaseCurrency string // ISO 4217; empty = USD
}

// CreateSite validates and stores a site owned by the given user.
func (s *Service) CreateSite(ctx context.Context, in NewSite) (model.Site, error) {
	owner, err := s.UserByEmail(ctx, in.OwnerEmail)
	if err != nil {
		return model.Site{}, err
	}
	site, err := ValidateSite(in.Domain, in.Timezone, in.BaseCurrency)
	if err != nil {
		return model.Site{}, err
	}
	site.ID = model.SiteID(auth.RandomString(12, idAlphabet))
	return s.store.CreateSite(ctx, site, owner.ID)
}

// ValidateSite checks and normalises a site's settings.
func ValidateSite(domain, timezone, baseCurrency string) (model.Site, error) {
	d, err := NormalizeDomain(domain)
	if err != nil {
		return model.Site{}, err
	}
	if timezone == "" {
		timezone = "UTC"
	}
	if _, err := model.LoadZone(timezone); err != nil {
		return model.Site{}, errs.InvalidField("timezone", "must be an IANA time zone such as Europe/Berlin")
	}
	cur := strings.ToUpper(strings.TrimSpace(baseCurrency))
	if cur == "" {
		cur = "USD"
	}
	if !currency.IsValid(cur) {
		return model.Site{}, errs.InvalidField("base_currency", "must be an ISO 4217 currency code such as EUR")
	}
	return model.Site{Domain: d, Timezone: timezone, BaseCurrency: cur,
		ClientRevenue: model.ClientRevenue{Cap: model.DefaultClientRevenueCap}}, nil
}

// NormalizeDomain lowercases a site domain and checks that it is a bare host
// name (no scheme, port or path) such as example.com or blog.example.com.
func NormalizeDomain(domain string) (string, error) {
	// read as tally reads every host (model.URLHost): an internationalised
	// name as browsers send it, in punycode (bücher.example →
	// xn--bcher-kva.example); one punycode cannot spell keeps letters the
	// labels' check below refuses
	d := model.URLHost(strings.TrimSpace(domain))
	bad := errs.InvalidField("domain", "must be a host name such as example.com, without scheme or path")
	if d == "" || len(d) > 253 || strings.ContainsAny(d, "/:@ ") {
		return "", bad
	}
	if net.ParseIP(d) != nil || d == "localhost" {
		return d, nil
	}
	for _, label := range strings.Split(d, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", bad
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "", bad
			}
		}
	}
	return d, nil
}

// Site returns a site the user can reach with their role; a missing site and
// a site of someone else are the same NotFound, so existence does not leak.
func (s *Service) Site(ctx context.Context, user model.UserID, id model.SiteID) (model.Site, model.Role, error) {
	if !id.Text() {
		return model.Site{}, "", errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	role, err := s.store.MemberRole(ctx, id, user)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Site{}, "", errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	if err != nil {
		return model.Site{}, "", err
	}
	site, err := s.store.SiteByID(ctx, id)
	if errors.Is(err, errs.ErrNotFound) {
		return model.Site{}, "", errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	}
	return site, role, err
}

// SitesOf lists the sites a user is a member of.
func (s *Service) SitesOf(ctx context.Context, ownerEmail string) ([]model.Site, error) {
	owner, err := s.UserByEmail(ctx, ownerEmail)
	if err != nil {
		return nil, err
	}
	return s.store.SitesByUser(ctx, owner.ID)
}

// AddMember gives a user (by email) a role on a site.
func (s *Service) AddMember(ctx context.Context, site model.SiteID, email string, role model.Role) error {
	if !role.Valid() {
		return errs.InvalidField("role", "must be owner, admin or viewer")
	}
	u, err := s.UserByEmail(ctx, email)
	if err != nil {
		return err
	}
	if _, err := s.store.SiteByID(ctx, site); errors.Is(err, errs.ErrNotFound) {
		return errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	} else if err != nil {
		return err
	}
	return s.store.AddMember(ctx, site, u.ID, role)
}
