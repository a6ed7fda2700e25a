package web

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/accounts"
	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/emailreports"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/goals"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/money"
)

// sitesPerPage is how many sites a page of the list shows, each with its
// summary (a report of its own): an account of hundreds of sites does not
// spend its stats allowance on every one each time it opens the list.
const sitesPerPage = 24

type sitesPage struct {
	page
	Sites []model.Membership
	// Search is the text the list is narrowed to (part of a domain); All
	// is how many sites match it, over every page.
	Search string
	All    int
	// Prev and Next are the links to the pages around this one ("" for
	// none).
	Prev, Next string
}

// siteList lists the user's sites in the order they were added,
// sitesPerPage a page (page=), narrowed to the domains that hold q= (in any
// case).
func (s *Server) siteList(c echo.Context) error {
	u, _ := session(c)
	list, err := s.deps.Sites.List(c.Request().Context(), u.principal())
	if err != nil {
		return err
	}
	search := strings.TrimSpace(c.QueryParam("q"))
	if len(search) > 253 {
		search = strings.ToValidUTF8(search[:253], "") // no domain is longer
	}
	if search != "" {
		needle := strings.ToLower(search)
		list = slices.DeleteFunc(list, func(m model.Membership) bool { return !strings.Contains(strings.ToLower(m.Site.Domain), needle) })
	}
	p := sitesPage{page: pageFor(c, "Sites", "sites"), Search: search, All: len(list)}
	pages := max(1, (len(list)+sitesPerPage-1)/sitesPerPage)
	n, err := strconv.Atoi(c.QueryParam("page"))
	if err != nil || n < 1 {
		n = 1
	}
	n = min(n, pages)
	link := func(page int) string {
		q := url.Values{}
		if search != "" {
			q.Set("q", search)
		}
		if page > 1 {
			q.Set("page", strconv.Itoa(page))
		}
		if len(q) == 0 {
			return "/sites"
		}
		return "/sites?" + q.Encode()
	}
	if n > 1 {
		p.Prev = link(n - 1)
	}
	if n < pages {
		p.Next = link(n + 1)
	}
	p.Sites = list[(n-1)*sitesPerPage : min(len(list), n*sitesPerPage)]
	return s.render(c, http.StatusOK, "sites", p)
}

type siteForm struct {
	page
	Domain, Timezone, Currency string
	Timezones, Currencies      []string
	Error                      string
	Field                      string
}

func (s *Server) siteForm(c echo.Context) error {
	return s.render(c, http.StatusOK, "site_new", newSiteForm(c, "", "UTC", "USD"))
}

func newSiteForm(c echo.Context, domain, tz, cur string) siteForm {
	return siteForm{page: pageFor(c, "Add a site", "sites"), Domain: domain, Timezone: tz, Currency: cur,
		Timezones: timezones, Currencies: currencies}
}

func (s *Server) createSite(c echo.Context) error {
	u, _ := session(c)
	in := accounts.SiteChange{Domain: c.FormValue("domain"), Timezone: c.FormValue("timezone"), BaseCurrency: c.FormValue("currency")}
	m, err := s.deps.Sites.Create(c.Request().Context(), u.principal(), in)
	if e := formError(err); e != nil {
		f := newSiteForm(c, in.Domain, in.Timezone, in.BaseCurrency)
		f.Error, f.Field = e.Message, e.Field
		return s.render(c, http.StatusBadRequest, "site_new", f)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/sites/"+string(m.Site.ID)+"/settings?created=1#install")
}

// formError is err when it is the user's to fix (a 4xx), else nil.
func formError(err error) *errs.Error {
	var e *errs.Error
	if errors.As(err, &e) && e.Kind != errs.Internal && e.Kind != errs.Unavailable {
		return e
	}
	return nil
}

type settingsPage struct {
	page
	Site      model.Site
	Role      model.Role
	CanManage bool
	IsOwner   bool
	Snippet   string
	// PixelSnippet is the image that counts visitors who run no script.
	PixelSnippet string
	BaseURL      string
	Notice       string
	// Error and ErrorSection report a form that was refused; ErrorField
	// names its field, when it is one.
	Error, ErrorSection, ErrorField string
	Timezones                       []string
	Currencies                      []string
	Goals                           []model.Goal
	Funnels                         []funnelItem
	NewFunnel                       funnelForm
	Providers                       []providerRow
	Members                         []model.Member
	SharedLinks                     []model.SharedLink
	// Exclusions fill the exclusions form: the site's, or what was typed
	// into a form that was refused.
	Exclusions exclusionsText
	// ReportsEnabled: this server sends email (TALLY_SMTP_URL is set).
	ReportsEnabled   bool
	ReportRecipients []model.ReportRecipient
	// ReportForm fills the add-a-recipient form: what was typed into a
	// refused one, else weekly ticked.
	ReportForm emailreports.Input
	// SpikesEnabled: this server sends email; Spike is the site's traffic
	// spike notification (Threshold 0: none), SpikeForm what was typed
	// into a refused form of its section.
	SpikesEnabled bool
	// SpikeQuietHours and SpikeMaxRecipients are the notifications' rules,
	// as the section states them.
	SpikeQuietHours, SpikeMaxRecipients int
	Spike                               model.SpikeNotification
	SpikeForm                           spikeForm
	// NewShareURL is the URL of the shared link just made: shown on this
	// one answer and never again.
	NewShareURL, NewShareLabel string
	// NewShareEmbed is the HTML that puts the new link's dashboard in
	// another site's page (embed mode), shown with it.
	NewShareEmbed string
}

type providerRow struct {
	ID, Name, WebhookURL string
	// Secrets is how many signing secrets are set (never the secrets).
	Secrets   int
	UpdatedAt time.Time
}

// providerNames are the payment providers behind the spec's provider_a…d.
var providerNames = []struct {
	ID   model.Provider
	Name string
}{{model.ProviderA, "Stripe"}, {model.ProviderB, "Lemon Squeezy"}, {model.ProviderC, "Paddle Billing"}, {model.ProviderD, "Polar"}}

// notices are the confirmations shown after a form succeeded.
var notices = map[string]string{
	"created": "Your site is ready. Install the snippet below on every page to start counting.",
	"saved":   "Saved.", "goal": "Goal saved.", "goal_deleted": "Goal deleted.", "funnel": "Funnel saved.", "funnel_deleted": "Funnel deleted.", "secret": "Webhook signing secrets saved.",
	"member": "Member saved.", "member_removed": "Member removed.", "client_revenue": "Client revenue settings saved.",
	"client_revenue_purged":    "Revenue reported by the tracking script deleted.",
	"exclusions":               "Exclusions saved: they apply from the next event on.",
	"share_deleted":            "Shared link deleted: its URL opens nothing any more.",
	"share_password":           "Password set: the link asks for it, of browsers that opened it before too.",
	"share_password_removed":   "Password removed: whoever has the link's URL sees its dashboard.",
	"report_recipient":         "Email reports saved.",
	"report_recipient_removed": "Address removed: it gets no more email reports.",
	"spike":                    "Spike notification saved.",
	"spike_off":                "Spike notification turned off: its addresses are removed.",
	"spike_recipient":          "Address added to the spike notification.",
	"spike_recipient_removed":  "Address removed: it gets no more spike notifications.",
}

func (s *Server) settings(c echo.Context) error {
	p, err := s.settingsData(c)
	if err != nil {
		return err
	}
	for k, msg := range notices {
		if c.QueryParam(k) != "" {
			p.Notice = msg
		}
	}
	return s.render(c, http.StatusOK, "settings", p)
}

// settingsData gathers a site's settings page.
func (s *Server) settingsData(c echo.Context) (settingsPage, error) {
	m, pr, err := s.membership(c)
	if err != nil {
		return settingsPage{}, err
	}
	ctx, u := c.Request().Context(), pr.UserID
	base := s.baseURL(c)
	p := settingsPage{page: pageFor(c, "Settings · "+m.Site.Domain, "sites"), Site: m.Site, Role: m.Role,
		CanManage: m.Role.CanWrite(), IsOwner: m.Role == model.RoleOwner, BaseURL: base,
		Snippet: `<script defer data-site="` + string(m.Site.ID) + `" src="` + base + `/js/tally.js"></script>`,
		PixelSnippet: `<noscript><img src="` + base + `/p.gif?site_id=` + url.QueryEscape(string(m.Site.ID)) +
			`" alt="" referrerpolicy="no-referrer-when-downgrade"></noscript>`,
		Timezones: timezones, Currencies: currencies}
	if p.Goals, err = s.deps.Goals.List(ctx, pr, m.Site.ID); err != nil {
		return p, err
	}
	if p.Funnels, p.NewFunnel, err = s.funnelSettings(ctx, pr, m.Site.ID, p.CSRF); err != nil {
		return p, err
	}
	if !p.CanManage {
		return p, nil
	}
	p.Exclusions = exclusionsTextOf(m.Site.Exclusions)
	if p.Members, err = s.deps.Team.Members(ctx, u, m.Site.ID); err != nil {
		return p, err
	}
	if p.SharedLinks, err = s.deps.Shares.List(ctx, pr, m.Site.ID); err != nil {
		return p, err
	}
	if err := s.reportSettings(ctx, &p, pr); err != nil {
		return p, err
	}
	if err := s.spikeSettings(ctx, &p, pr); err != nil {
		return p, err
	}
	states, err := s.deps.Team.SecretStates(ctx, u, m.Site.ID)
	if err != nil {
		return p, err
	}
	for _, pn := range providerNames {
		row := providerRow{ID: string(pn.ID), Name: pn.Name,
			WebhookURL: base + "/api/v1/webhooks/" + string(pn.ID) + "?site_id=" + url.QueryEscape(string(m.Site.ID))}
		for _, st := range states {
			if st.Provider == pn.ID {
				row.Secrets, row.UpdatedAt = st.Count, st.UpdatedAt
			}
		}
		p.Providers = append(p.Providers, row)
	}
	return p, nil
}

// baseURL is the server's address as the sites' pages and the payment
// providers see it.
func (s *Server) baseURL(c echo.Context) string {
	return httpapi.BaseURL(c, s.deps.PublicURL, s.deps.TrustedProxies)
}

// settingsError shows the settings page again with a refused form's message.
// settingsError answers a refused settings form: the page again, the
// refusal's message in section, and whatever keep puts back of what was
// typed (or reworded of the message). An error no form can show is
// returned as it is.
func (s *Server) settingsError(c echo.Context, section string, err error, keep ...func(*settingsPage, *errs.Error)) error {
	e := formError(err)
	if e == nil {
		return err
	}
	p, perr := s.settingsData(c)
	if perr != nil {
		return perr
	}
	p.Error, p.ErrorSection = e.Message, section
	for _, k := range keep {
		k(&p, e)
	}
	return s.render(c, httpapi.StatusOf(e.Kind), "settings", p)
}

func (s *Server) settingsRedirect(c echo.Context, notice, anchor string) error {
	return c.Redirect(http.StatusSeeOther, "/sites/"+c.Param("site")+"/settings?"+notice+"=1#"+anchor)
}

func (s *Server) updateSite(c echo.Context) error {
	u, _ := session(c)
	in := accounts.SiteChange{Domain: c.FormValue("domain"), Timezone: c.FormValue("timezone"), BaseCurrency: c.FormValue("currency")}
	if _, err := s.deps.Sites.Update(c.Request().Context(), u.principal(), model.SiteID(c.Param("site")), in); err != nil {
		return s.settingsError(c, "general", err)
	}
	return s.settingsRedirect(c, "saved", "general")
}

func (s *Server) deleteSite(c echo.Context) error {
	m, pr, err := s.membership(c)
	if err != nil {
		return err
	}
	if strings.TrimSpace(c.FormValue("confirm")) != m.Site.Domain {
		return s.settingsError(c, "delete", errs.InvalidField("confirm", "type the site's domain, %s, to confirm", m.Site.Domain))
	}
	if err := s.deps.Sites.Delete(c.Request().Context(), pr, m.Site.ID); err != nil {
		return s.settingsError(c, "delete", err)
	}
	return c.Redirect(http.StatusSeeOther, "/sites")
}

func goalInput(c echo.Context) goals.Input {
	in := goals.Input{SiteID: c.Param("site"), Name: c.FormValue("name"), Type: c.FormValue("type")}
	if in.Type == string(model.GoalPageview) {
		in.PagePath = c.FormValue("page_path")
	} else {
		in.EventName = c.FormValue("event_name")
	}
	return in
}

func (s *Server) createGoal(c echo.Context) error {
	u, _ := session(c)
	if _, err := s.deps.Goals.Create(c.Request().Context(), u.principal(), goalInput(c)); err != nil {
		return s.settingsError(c, "goals", err)
	}
	return s.settingsRedirect(c, "goal", "goals")
}

type goalPage struct {
	page
	Site  model.Site
	Goal  model.Goal
	Error string
}

// siteGoal is the goal of the URL, which must belong to the URL's site.
func (s *Server) siteGoal(c echo.Context) (model.Membership, auth.Principal, model.Goal, error) {
	m, pr, err := s.membership(c)
	if err != nil {
		return m, pr, model.Goal{}, err
	}
	g, err := s.deps.Goals.Get(c.Request().Context(), pr, model.GoalID(c.Param("goal")))
	if err == nil && g.SiteID != m.Site.ID {
		err = errs.E(errs.NotFound, "goal_not_found", "goal not found")
	}
	return m, pr, g, err
}

func (s *Server) goalForm(c echo.Context) error {
	m, _, g, err := s.siteGoal(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "goal", goalPage{page: pageFor(c, "Edit goal", "sites"), Site: m.Site, Goal: g})
}

func (s *Server) updateGoal(c echo.Context) error {
	m, pr, _, err := s.siteGoal(c)
	if err != nil {
		return err
	}
	in := goalInput(c)
	g, err := s.deps.Goals.Update(c.Request().Context(), pr, model.GoalID(c.Param("goal")), in)
	if e := formError(err); e != nil && e.Kind != errs.NotFound {
		g = model.Goal{ID: model.GoalID(c.Param("goal")), SiteID: m.Site.ID, Name: in.Name, Type: model.GoalType(in.Type),
			PagePath: in.PagePath, EventName: in.EventName}
		return s.render(c, httpapi.StatusOf(e.Kind), "goal", goalPage{page: pageFor(c, "Edit goal", "sites"), Site: m.Site, Goal: g, Error: e.Message})
	}
	if err != nil {
		return err
	}
	return s.settingsRedirect(c, "goal", "goals")
}

func (s *Server) deleteGoal(c echo.Context) error {
	_, pr, g, err := s.siteGoal(c)
	if err != nil {
		return err
	}
	if err := s.deps.Goals.Delete(c.Request().Context(), pr, g.ID); err != nil {
		return s.settingsError(c, "goals", err)
	}
	return s.settingsRedirect(c, "goal_deleted", "goals")
}

// setSecret adds the signing secrets typed, one a line, to a provider's, or
// replaces them (the form's two buttons; adding unless replacing is asked).
// A refused form is the page again with its field empty: a secret is never
// written into a page.
func (s *Server) setSecret(c echo.Context) error {
	u, _ := session(c)
	var add bool
	switch c.FormValue("mode") {
	case "", "add":
		add = true
	case "replace":
	default:
		return s.settingsError(c, "revenue", errs.InvalidField("mode", "must be add or replace"))
	}
	_, err := s.deps.Team.SetSecrets(c.Request().Context(), u.user.ID, model.SiteID(c.Param("site")),
		model.Provider(c.FormValue("provider")), strings.Split(c.FormValue("secret"), "\n"), add)
	if err != nil {
		return s.settingsError(c, "revenue", err)
	}
	return s.settingsRedirect(c, "secret", "revenue")
}

// setClientRevenue saves what the site does with revenue the tracking
// script reports: counted with verified revenue or apart, and its cap per
// event (in major units of the base currency in the form).
func (s *Server) setClientRevenue(c echo.Context) error {
	m, pr, err := s.membership(c)
	if err != nil {
		return err
	}
	capped, err := money.MinorUnits(c.FormValue("cap"), m.Site.BaseCurrency)
	if err != nil {
		return s.settingsError(c, "revenue", errs.InvalidField("client_revenue.cap", "the cap must be an amount of %s: %v", m.Site.BaseCurrency, err))
	}
	included := c.FormValue("included") == "on"
	in := accounts.SiteChange{ClientRevenueIncluded: &included, ClientRevenueCap: &capped}
	if _, err := s.deps.Sites.Update(c.Request().Context(), pr, m.Site.ID, in); err != nil {
		return s.settingsError(c, "revenue", err)
	}
	return s.settingsRedirect(c, "client_revenue", "revenue")
}

// purgeClientRevenue deletes the revenue the tracking script reported.
func (s *Server) purgeClientRevenue(c echo.Context) error {
	u, _ := session(c)
	if _, err := s.deps.Revenue.PurgeClientRevenue(c.Request().Context(), u.principal(), model.SiteID(c.Param("site"))); err != nil {
		return s.settingsError(c, "revenue", err)
	}
	return s.settingsRedirect(c, "client_revenue_purged", "revenue")
}

func (s *Server) setMember(c echo.Context) error {
	u, _ := session(c)
	err := s.deps.Team.SetMember(c.Request().Context(), u.user.ID, model.SiteID(c.Param("site")), c.FormValue("email"),
		model.Role(c.FormValue("role")))
	if err != nil {
		return s.settingsError(c, "members", err)
	}
	return s.settingsRedirect(c, "member", "members")
}

func (s *Server) removeMember(c echo.Context) error {
	u, _ := session(c)
	err := s.deps.Team.RemoveMember(c.Request().Context(), u.user.ID, model.SiteID(c.Param("site")), c.FormValue("email"))
	if err != nil {
		return s.settingsError(c, "members", err)
	}
	return s.settingsRedirect(c, "member_removed", "members")
}
