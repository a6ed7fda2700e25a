package web

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/tally-analytics/tally/internal/auth"
	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/funnels"
	"github.com/tally-analytics/tally/internal/httpapi"
	"github.com/tally-analytics/tally/internal/model"
	"github.com/tally-analytics/tally/internal/present"
	"github.com/tally-analytics/tally/internal/stats"
)

// Funnels manages a site's funnels.
type Funnels interface {
	List(ctx context.Context, p auth.Principal, site model.SiteID) ([]model.Funnel, error)
	Create(ctx context.Context, p auth.Principal, in funnels.Input) (model.Funnel, error)
	Get(ctx context.Context, p auth.Principal, id model.FunnelID) (model.Funnel, error)
	Update(ctx context.Context, p auth.Principal, id model.FunnelID, in funnels.Input) (model.Funnel, error)
	Delete(ctx context.Context, p auth.Principal, id model.FunnelID) error
}

// funnelCard is the dashboard's funnel: a picker of the site's funnels and
// the chosen one's steps.
type funnelCard struct {
	View     view
	Picker   []cardTab
	Report   stats.FunnelReport
	Rows     []funnelRow
	Disabled string
	Window   string
	// Settings links to the funnel editor ("" on a shared view).
	Settings string
	// Revenue shows the steps' revenue (not on a shared view without it).
	Revenue bool
}

type funnelRow struct {
	Step   stats.FunnelStepReport
	Bar    string // conversion rate, as the bar's width
	Median string
}

// funnelsCard shows the funnel of the view (its funnel parameter), else the
// site's first. Choosing another reloads the dashboard with it, so that the
// download holds the funnel shown.
func (s *Server) funnelsCard(c echo.Context, ctx context.Context, p auth.Principal, v view, r stats.Request) error {
	card := funnelCard{View: v, Revenue: !v.NoRevenue}
	if !v.Shared {
		card.Settings = sitePath(v.Site.ID) + "/settings#funnels"
	}
	list, err := s.deps.Funnels.List(ctx, p, v.Site.ID)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return s.renderCard(c, "funnel", card)
	}
	chosen := list[0].ID
	for _, f := range list {
		if string(f.ID) == v.Funnel {
			chosen = f.ID
		}
	}
	for _, f := range list {
		card.Picker = append(card.Picker, cardTab{Label: f.Name, URL: v.link("funnel", string(f.ID)) + "#card-funnels", Active: f.ID == chosen})
	}
	r.FunnelID = chosen
	res, err := s.deps.Stats.Funnel(ctx, p, r)
	if errs.KindOf(err) == errs.Invalid {
		var e *errs.Error
		if errors.As(err, &e) {
			card.Disabled = e.Message
		}
		return s.renderCard(c, "funnel", card)
	}
	if err != nil {
		return err
	}
	card.Report, card.Window = res, present.Duration(res.Funnel.Window.Seconds())
	for _, st := range res.Steps {
		row := funnelRow{Step: st, Bar: strconv.FormatFloat(st.ConversionRate, 'f', 1, 64)}
		if st.MedianSecondsFromPrevious != nil {
			row.Median = present.Duration(*st.MedianSecondsFromPrevious)
		}
		card.Rows = append(card.Rows, row)
	}
	return s.renderCard(c, "funnel", card)
}

// funnelSlots is how many step rows the funnel form offers (the most a
// funnel has).
const funnelSlots = funnels.MaxSteps

// funnelForm is the funnel editor's fields, as the form shows them.
type funnelForm struct {
	SiteID, CSRF, Suffix, Name string
	WindowMinutes              int64
	Steps                      []stepField
}

type stepField struct {
	Index, Number           int // from 0 (the form's names), from 1 (for people)
	Type, Target, PropsText string
}

// formOf fills the editor with a funnel (or, for a new one, empty steps).
func formOf(site model.SiteID, csrf string, f model.Funnel) funnelForm {
	form := funnelForm{SiteID: string(site), CSRF: csrf, Name: f.Name, WindowMinutes: int64(funnels.DefaultWindow.Minutes())}
	if f.ID != "" {
		form.Suffix, form.WindowMinutes = "/"+string(f.ID), int64(f.Window.Minutes())
	}
	for i := range funnelSlots {
		sf := stepField{Index: i, Number: i + 1, Type: string(model.GoalPageview)}
		if i < len(f.Steps) {
			st := f.Steps[i]
			sf.Type, sf.Target = string(st.Type), st.PagePath
			if st.Type == model.GoalCustomEvent {
				sf.Target, sf.PropsText = st.EventName, propsText(st.Props)
			}
		}
		form.Steps = append(form.Steps, sf)
	}
	return form
}

// propsText writes props as the form takes them: key=value, comma-separated.
func propsText(props map[string]string) string {
	label := stats.StepLabel(model.FunnelStep{Type: model.GoalCustomEvent, Props: props})
	return strings.TrimSuffix(strings.TrimPrefix(label, " ("), ")")
}

// funnelInput reads the editor's form: the step rows with a target, in
// order; the window in minutes.
func funnelInput(c echo.Context) (funnels.Input, error) {
	in := funnels.Input{SiteID: c.Param("site"), Name: c.FormValue("name")}
	if w := strings.TrimSpace(c.FormValue("window_minutes")); w != "" {
		minutes, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			return in, errs.InvalidField("window_seconds", "the window is a whole number of minutes")
		}
		seconds := minutes * 60
		if seconds/60 != minutes { // beyond any window, and not to wrap round into one
			seconds = math.MaxInt64
		}
		in.WindowSeconds = &seconds
	}
	for i := range funnelSlots {
		n := strconv.Itoa(i)
		target := strings.TrimSpace(c.FormValue("step_target_" + n))
		if target == "" {
			continue
		}
		st := funnels.StepInput{Type: c.FormValue("step_type_" + n)}
		if st.Type == string(model.GoalCustomEvent) {
			st.EventName = target
			for _, kv := range strings.Split(c.FormValue("step_props_"+n), ",") {
				k, v, ok := strings.Cut(kv, "=")
				if strings.TrimSpace(kv) == "" {
					continue
				}
				if !ok {
					return in, errs.InvalidField(fmt.Sprintf("steps.%d.props", len(in.Steps)), "write props as key=value, separated by commas")
				}
				if st.Props == nil {
					st.Props = map[string]string{}
				}
				st.Props[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		} else {
			st.PagePath = target
		}
		in.Steps = append(in.Steps, st)
	}
	return in, nil
}

// readable turns a refused funnel form's error into one a person can place:
// "Step 2: must start with /".
func readable(err error) error {
	var e *errs.Error
	if !errors.As(err, &e) || e.Field == "" {
		return err
	}
	msg := e.Message
	if rest, ok := strings.CutPrefix(e.Field, "steps."); ok {
		i, _, _ := strings.Cut(rest, ".")
		if n, convErr := strconv.Atoi(i); convErr == nil {
			msg = fmt.Sprintf("Step %d: %s", n+1, msg)
		}
	} else if e.Field == "steps" {
		msg = "Steps: " + msg
	} else if e.Field == "window_seconds" {
		msg = "Window: " + msg
	}
	out := *e
	out.Message = msg
	return &out
}

func (s *Server) createFunnel(c echo.Context) error {
	u, _ := session(c)
	in, err := funnelInput(c)
	if err == nil {
		_, err = s.deps.Funnels.Create(c.Request().Context(), u.principal(), in)
	}
	if err != nil {
		return s.settingsError(c, "funnels", readable(err))
	}
	return s.settingsRedirect(c, "funnel", "funnels")
}

type funnelPage struct {
	page
	Site  model.Site
	Form  funnelForm
	Error string
}

// siteFunnel is the funnel of the URL, which must belong to the URL's site.
func (s *Server) siteFunnel(c echo.Context) (model.Membership, auth.Principal, model.Funnel, error) {
	m, pr, err := s.membership(c)
	if err != nil {
		return m, pr, model.Funnel{}, err
	}
	f, err := s.deps.Funnels.Get(c.Request().Context(), pr, model.FunnelID(c.Param("funnel")))
	if err == nil && f.SiteID != m.Site.ID {
		err = funnels.NotFound()
	}
	return m, pr, f, err
}

func (s *Server) funnelEditor(c echo.Context) error {
	m, _, f, err := s.siteFunnel(c)
	if err != nil {
		return err
	}
	pg := pageFor(c, "Edit funnel", "sites")
	return s.render(c, http.StatusOK, "funnel", funnelPage{page: pg, Site: m.Site, Form: formOf(m.Site.ID, pg.CSRF, f)})
}

func (s *Server) updateFunnel(c echo.Context) error {
	m, pr, f, err := s.siteFunnel(c)
	if err != nil {
		return err
	}
	in, err := funnelInput(c)
	if err == nil {
		_, err = s.deps.Funnels.Update(c.Request().Context(), pr, f.ID, in)
	}
	if e := formError(readable(err)); e != nil {
		// the form again, as it was sent
		pg := pageFor(c, "Edit funnel", "sites")
		form := formOf(m.Site.ID, pg.CSRF, f)
		form.Name = c.FormValue("name")
		form.WindowMinutes, _ = strconv.ParseInt(c.FormValue("window_minutes"), 10, 64)
		for i := range form.Steps {
			n := strconv.Itoa(i)
			form.Steps[i] = stepField{Index: i, Number: i + 1, Type: c.FormValue("step_type_" + n), Target: c.FormValue("step_target_" + n),
				PropsText: c.FormValue("step_props_" + n)}
		}
		return s.render(c, httpapi.StatusOf(e.Kind), "funnel", funnelPage{page: pg, Site: m.Site, Form: form, Error: e.Message})
	}
	if err != nil {
		return err
	}
	return s.settingsRedirect(c, "funnel", "funnels")
}

func (s *Server) deleteFunnel(c echo.Context) error {
	_, pr, f, err := s.siteFunnel(c)
	if err != nil {
		return err
	}
	if err := s.deps.Funnels.Delete(c.Request().Context(), pr, f.ID); err != nil {
		return s.settingsError(c, "funnels", err)
	}
	return s.settingsRedirect(c, "funnel_deleted", "funnels")
}

// funnelItem is a funnel in the settings' list.
type funnelItem struct {
	ID, Name string
	// Steps are the steps' labels, in order.
	Steps  []string
	Window string
}

// funnelSettings are the settings page's funnels and the empty form of a
// new one.
func (s *Server) funnelSettings(ctx context.Context, p auth.Principal, site model.SiteID, csrf string) ([]funnelItem, funnelForm, error) {
	list, err := s.deps.Funnels.List(ctx, p, site)
	if err != nil {
		return nil, funnelForm{}, err
	}
	items := make([]funnelItem, len(list))
	for i, f := range list {
		items[i] = funnelItem{ID: string(f.ID), Name: f.Name, Window: present.Duration(f.Window.Seconds())}
		for _, st := range f.Steps {
			items[i].Steps = append(items[i].Steps, stats.StepLabel(st))
		}
	}
	return items, formOf(site, csrf, model.Funnel{}), nil
}
