package accounts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// SetProviderSecret replaces a site's webhook signing secrets for a provider
// with one secret.
func (s *Service) SetProviderSecret(ctx context.Context, site model.SiteID, p model.Provider, secret string) error {
	_, err := s.SetProviderSecrets(ctx, site, p, []string{secret}, false)
	return err
}

// SetProviderSecrets sets a site's webhook signing secrets for a provider:
// with add, secrets join those set already (a secret set already is not set
// twice); without, they replace them. Blank entries are skipped; a site holds
// at most model.MaxProviderSecrets per provider. It returns how many the site
// holds now. No error names or quotes a secret: a refused one is named by its
// place in secrets.
func (s *Service) SetProviderSecrets(ctx context.Context, site model.SiteID, p model.Provider, secrets []string, add bool) (int, error) {
	if !p.Valid() {
		return 0, errs.InvalidField("provider", "must be provider_a, provider_b, provider_c or provider_d")
	}
	given, err := cleanSecrets(secrets)
	if err != nil {
		return 0, err
	}
	if _, err := s.store.SiteByID(ctx, site); errors.Is(err, errs.ErrNotFound) {
		return 0, errs.E(errs.NotFound, "site_not_found", "site not found").WithField("site_id")
	} else if err != nil {
		return 0, err
	}
	held := 0
	err = s.store.UpdateProviderSecrets(ctx, site, p, func(current []string) ([]string, error) {
		next := given
		if add {
			next = slices.Clone(current)
			for _, sec := range given {
				if !slices.Contains(next, sec) {
					next = append(next, sec)
				}
			}
			if len(next) > model.MaxProviderSecrets {
				return nil, errs.InvalidField("secret", "a site holds at most %d signing secrets per provider, and %d are set: "+
					"replace them instead of adding", model.MaxProviderSecrets, len(current))
			}
		}
		held = len(next)
		return next, nil
	})
	return held, err
}

// cleanSecrets trims each secret (a secret pasted with its line's end, or
// with control characters, would never match a signature), drops blank
// ones and repeats, and checks the rest.
func cleanSecrets(secrets []string) ([]string, error) {
	var out []string
	for i, sec := range secrets {
		sec = strings.TrimSpace(sec)
		if sec == "" {
			continue
		}
		if len(sec) < 8 || len(sec) > 512 || strings.ContainsFunc(sec, unicode.IsControl) {
			where := ""
			if len(secrets) > 1 {
				where = fmt.Sprintf("line %d: ", i+1)
			}
			return nil, errs.InvalidField("secret", "%smust be 8 to 512 characters, none of them control characters", where)
		}
		if !slices.Contains(out, sec) {
			out = append(out, sec)
		}
	}
	switch {
	case len(out) == 0:
		return nil, errs.InvalidField("secret", "a signing secret is required")
	case len(out) > model.MaxProviderSecrets:
		return nil, errs.InvalidField("secret", "at most %d signing secrets per provider, one a line", model.MaxProviderSecrets)
	}
	return out, nil
}
