package accounts

import (
	"context"
	"testing"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/model"
)

// siteLookup knows sites and no roles: a shared link's visitor has none.
type siteLookup map[model.SiteID]model.Site

func (l siteLookup) Role(context.Context, model.UserID, model.SiteID) (model.Role, error) {
	return "", errs.ErrNotFound
}

func (l siteLookup) Site(_ context.Context, id model.SiteID) (model.Site, error) {
	if s, ok := l[id]; ok {
		return s, nil
	}
	return model.Site{}, errs.ErrNotFound
}

// A shared link's visitor reads its site's statistics as a viewer, and
// nothing else: another site, or any other action, is not found or lacks
// its scope.
func TestGuardSharedLinkVisitor(t *testing.T) {
	for name, p := range map[string]auth.Principal{"shared link": auth.ForSharedLink("a"), "email report": auth.ForEmailReport("a")} {
		t.Run(name, func(t *testing.T) { checkOneSiteReader(t, p) })
	}
}

// checkOneSiteReader checks a principal that reads site a's statistics
// and nothing else.
func checkOneSiteReader(t *testing.T, p auth.Principal) {
	g := NewGuard(siteLookup{"a": {ID: "a", Domain: "a.example"}, "b": {ID: "b", Domain: "b.example"}})
	ctx := context.Background()
	site, role, err := g.Check(ctx, p, "a", ReadStats)
	if err != nil || site.Domain != "a.example" || role != model.RoleViewer {
		t.Fatalf("its own site's stats: %+v, %q, %v", site, role, err)
	}
	for _, tc := range []struct {
		site model.SiteID
		act  Action
		want errs.Kind
	}{
		{"b", ReadStats, errs.NotFound},
		{"gone", ReadStats, errs.NotFound},
		{"a", ViewSite, errs.Forbidden},
		{"a", ManageSite, errs.Forbidden},
		{"a", FindGoal, errs.Forbidden},
		{"a", SendEvents, errs.Forbidden},
	} {
		if _, _, err := g.Check(ctx, p, tc.site, tc.act); errs.KindOf(err) != tc.want {
			t.Errorf("action %d on %s: %v, want kind %d", tc.act, tc.site, err, tc.want)
		}
	}
	// a principal with stats:read that is not the link's (a forged scope list) still reaches only its site
	p.Scopes = model.AllScopes
	if _, _, err := g.Check(ctx, p, "a", ManageSite); errs.KindOf(err) != errs.NotFound {
		t.Errorf("a shared principal with every scope managing its site: %v, want not found", err)
	}
}
