package revenue

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tally-analytics/tally/internal/model"
)

// sessionsOf is a warehouse that knows one visitor's sessions.
type sessionsOf struct {
	Warehouse
	sessions []model.SessionTouch
	from, to time.Time // the window asked for
}

func (w *sessionsOf) VisitorSessions(_ context.Context, _ model.SiteID, _ uint64, from, to time.Time) ([]model.SessionTouch, error) {
	w.from, w.to = from, to
	var out []model.SessionTouch
	for _, s := range w.sessions {
		if !s.Start.Before(from) && !s.Start.After(to) {
			out = append(out, s)
		}
	}
	return out, nil
}

// The three touches of a payment: the last non-direct session, the last
// session (direct included) and the first, within the attribution window.
func TestAttribute(t *testing.T) {
	at := time.Date(2026, 7, 3, 11, 6, 0, 0, time.UTC)
	twitter := model.Touch{Source: "Twitter", SourceType: "social", EntryPage: "/blog/launch", UTMCampaign: "launch"}
	google := model.Touch{Source: "Google", SourceType: "search", EntryPage: "/features", UTMCampaign: "spring"}
	direct := model.Touch{Source: "Direct / None", SourceType: model.SourceDirect, EntryPage: "/pricing"}
	hinted := model.Touch{Source: "Direct / None", SourceType: model.SourceDirect, EntryPage: "/checkout"}
	old := model.Touch{Source: "Bing", SourceType: "search", EntryPage: "/old"}
	email := model.Touch{Source: "Direct / None", SourceType: model.SourceDirect, EntryPage: "/offer", UTMMedium: "email"}
	tagged := model.Touch{Source: "Direct / None", SourceType: model.SourceDirect, EntryPage: "/", UTMCampaign: "spring"}
	content := model.Touch{Source: "Direct / None", SourceType: model.SourceDirect, EntryPage: "/ad", UTMContent: "banner"}
	session := func(ago time.Duration, tc model.Touch) model.SessionTouch {
		return model.SessionTouch{Start: at.Add(-ago), Touch: tc}
	}
	for _, tc := range []struct {
		name     string
		sessions []model.SessionTouch
		hint     *model.Touch
		want     *model.PaymentAttribution
	}{
		{"three sources", []model.SessionTouch{session(50*time.Hour, twitter), session(25*time.Hour, google), session(6*time.Minute, direct)}, nil,
			&model.PaymentAttribution{LastNonDirect: google, First: twitter, Latest: &direct}},
		{"direct only: the last session for both last touches", []model.SessionTouch{session(time.Hour, direct)}, nil,
			&model.PaymentAttribution{LastNonDirect: direct, First: direct, Latest: &direct}},
		{"the session of a tracked revenue event is the last", []model.SessionTouch{session(time.Hour, google)}, &hinted,
			&model.PaymentAttribution{LastNonDirect: google, First: google, Latest: &hinted}},
		{"sessions before the window do not count", []model.SessionTouch{session(AttributionWindow+time.Hour, old), session(time.Hour, google)}, nil,
			&model.PaymentAttribution{LastNonDirect: google, First: google, Latest: &google}},
		{"a medium alone is no direct visit", []model.SessionTouch{session(25*time.Hour, google), session(time.Hour, email)}, nil,
			&model.PaymentAttribution{LastNonDirect: email, First: google, Latest: &email}},
		{"a campaign alone is no direct visit", []model.SessionTouch{session(25*time.Hour, google), session(2*time.Hour, tagged),
			session(time.Hour, direct)}, nil, &model.PaymentAttribution{LastNonDirect: tagged, First: google, Latest: &direct}},
		{"a link's content alone is direct, as the channels count it", []model.SessionTouch{session(25*time.Hour, google),
			session(time.Hour, content)}, nil, &model.PaymentAttribution{LastNonDirect: google, First: google, Latest: &content}},
		{"no session: unattributed", nil, nil, nil},
		{"a session after the payment does not count", []model.SessionTouch{session(-time.Minute, google)}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &sessionsOf{sessions: tc.sessions}
			s := NewService(nil, w, nil, func() time.Time { return at }, slog.Default())
			got, err := s.attribute(context.Background(), "s1", 7, at, tc.hint)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if !w.to.Equal(at) || !w.from.Equal(at.Add(-AttributionWindow)) {
				t.Errorf("sessions asked for %v..%v, want the window before the payment", w.from, w.to)
			}
		})
	}
}
