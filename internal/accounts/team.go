package accounts

import (
	"context"
	"errors"
	"net/mail"
	"strings"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// TeamStore is what managing a site's members and secrets needs beyond Store.
type TeamStore interface {
	SiteMembers(ctx context.Context, site model.SiteID) ([]model.Member, error)
	InviteMember(ctx context.Context, site model.SiteID, email string, role model.Role) error
	RemoveMember(ctx context.Context, site model.SiteID, email string) error
	ProviderSecretStates(ctx context.Context, site model.SiteID) ([]model.ProviderSecretState, error)
}

// Team manages who may see a site and the site's payment-provider secrets:
// owners and admins may; viewers may not. The owner's own role cannot be
// changed or taken away (a site always has its owner).
type Team struct {
	svc   *Service
	store TeamStore
}

// NewTeam wires member management over the accounts service.
func NewTeam(svc *Service, store TeamStore) *Team { return &Team{svc: svc, store: store} }

// manager checks that user may manage site.
func (t *Team) manager(ctx context.Context, user model.UserID, site model.SiteID) error {
	// the dashboard's login: every scope
	_, _, err := t.svc.Check(ctx, auth.Principal{UserID: user, Scopes: model.AllScopes}, site, ManageTeam)
	return err
}

// Members lists a site's members.
func (t *Team) Members(ctx context.Context, user model.UserID, site model.SiteID) ([]model.Member, error) {
	if err := t.manager(ctx, user, site); err != nil {
		return nil, err
	}
	return t.store.SiteMembers(ctx, site)
}

// SetMember gives email the role admin or viewer on site: at once when it
// has an account (adding the user, or changing their role), else when an
// account with that email is created. The answer is the same either way, so
// the form tells nobody which emails have accounts.
func (t *Team) SetMember(ctx context.Context, user model.UserID, site model.SiteID, email string, role model.Role) error {
	if err := t.manager(ctx, user, site); err != nil {
		return err
	}
	if role != model.RoleAdmin && role != model.RoleViewer {
		return errs.InvalidField("role", "must be admin or viewer")
	}
	email = strings.ToLower(strings.TrimSpace(email))
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
		return errs.InvalidField("email", "must be a valid email address")
	}
	target, err := t.svc.UserByEmail(ctx, email)
	if errs.KindOf(err) == errs.NotFound {
		return t.store.InviteMember(ctx, site, email, role)
	}
	if err != nil {
		return err
	}
	if err := t.notOwner(ctx, site, target.ID); err != nil {
		return err
	}
	if err := t.svc.store.AddMember(ctx, site, target.ID, role); err != nil {
		return err
	}
	t.svc.accessChanged(ctx) // a demotion applies at once
	return nil
}

// RemoveMember takes the role of the member (or invited email) with email
// on site away, and the site's shared links the member made (a link is as
// good as its maker's access); the owner's role stays.
func (t *Team) RemoveMember(ctx context.Context, user model.UserID, site model.SiteID, email string) error {
	if err := t.manager(ctx, user, site); err != nil {
		return err
	}
	email = strings.ToLower(strings.TrimSpace(email))
	if target, err := t.svc.UserByEmail(ctx, email); err == nil {
		if err := t.notOwner(ctx, site, target.ID); err != nil {
			return err
		}
	}
	err := t.store.RemoveMember(ctx, site, email)
	if errors.Is(err, errs.ErrNotFound) {
		return errs.E(errs.NotFound, "not_found", "this email has no role on the site").WithField("email")
	}
	if err != nil {
		return err
	}
	t.svc.accessChanged(ctx)
	return nil
}

func (t *Team) notOwner(ctx context.Context, site model.SiteID, user model.UserID) error {
	role, err := t.svc.store.MemberRole(ctx, site, user)
	if err == nil && role == model.RoleOwner {
		return errs.E(errs.Forbidden, "forbidden", "the owner's role cannot be changed or removed")
	}
	if err != nil && !errors.Is(err, errs.ErrNotFound) {
		return err
	}
	return nil
}

// SecretStates tells which payment providers site has webhook secrets for,
// and how many.
func (t *Team) SecretStates(ctx context.Context, user model.UserID, site model.SiteID) ([]model.ProviderSecretState, error) {
	if err := t.manager(ctx, user, site); err != nil {
		return nil, err
	}
	return t.store.ProviderSecretStates(ctx, site)
}

// SetSecrets adds to or replaces site's webhook signing secrets for a
// provider (see Service.SetProviderSecrets) and says how many it holds now.
func (t *Team) SetSecrets(ctx context.Context, user model.UserID, site model.SiteID, p model.Provider, secrets []string, add bool) (int, error) {
	if err := t.manager(ctx, user, site); err != nil {
		return 0, err
	}
	return t.svc.SetProviderSecrets(ctx, site, p, secrets, add)
}
