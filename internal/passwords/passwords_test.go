package passwords

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/errs"
	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/model"
)

// The email says the same in both parts: whose account, the link, that it
// works once for an hour, what setting a password ends, and what to do if
// it was not asked for.
func TestResetMessage(t *testing.T) {
	link := "https://analytics.example.com/login/reset/q3_7Hx-2kLmNpQrStUvWxYz0123456789AbCdEfGhIj"
	msg, err := resetMessage("tally <accounts@example.com>", "o'brien@example.com", link)
	if err != nil {
		t.Fatal(err)
	}
	if msg.To != "o'brien@example.com" || msg.Subject != "Set a new tally password" || msg.From != "tally <accounts@example.com>" {
		t.Errorf("headers: %+v", msg)
	}
	for _, part := range []string{msg.Text, strings.ReplaceAll(msg.HTML, "&#39;", "'")} {
		for _, want := range []string{"o'brien@example.com", link, "works once, for one hour", "logs you out everywhere",
			"API keys keep working", "ignore this email", "analytics.example.com"} {
			if !strings.Contains(part, want) {
				t.Errorf("a part lacks %q:\n%s", want, part)
			}
		}
	}
	if _, err := msg.Bytes(time.Now()); err != nil {
		t.Errorf("the message cannot be sent: %v", err)
	}
}

type noSender struct{}

func (noSender) Send(context.Context, mailer.Message) error { return nil }

// Requests wait in a bounded queue: past it one is dropped, and logged
// (without its address), rather than held; a server without mail or a
// public address queues none.
func TestRequestResetQueue(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	s := NewService(nil, nil, nil, nil, time.Now, log, WithMail(Mail{Sender: noSender{}, From: "a@example.com", PublicURL: "https://x.example/"}))
	for range queueLength {
		s.RequestReset(" someone@example.com ")
	}
	if len(s.queue) != queueLength || <-s.queue != "someone@example.com" || logged.Len() != 0 {
		t.Fatalf("queued %d, logged %q", len(s.queue), logged.String())
	}
	s.RequestReset("two@example.com")
	s.RequestReset("three@example.com")
	if !strings.Contains(logged.String(), "one was dropped") || strings.Contains(logged.String(), "@example.com") {
		t.Errorf("a full queue logged %q", logged.String())
	}
	for _, m := range []Mail{{From: "a@example.com", PublicURL: "https://x.example"}, {Sender: noSender{}, From: "a@example.com"}} {
		off := NewService(nil, nil, nil, nil, time.Now, log, WithMail(m))
		off.RequestReset("someone@example.com")
		if off.Resets() || len(off.queue) != 0 {
			t.Errorf("a server with %+v sends links", m)
		}
	}
}

// resetStore knows the accounts of emails and keeps the resets made for
// them (the other methods are not reached by Run).
type resetStore struct {
	Store
	users  map[string]model.User
	resets []model.UserID
}

func (s *resetStore) UserByEmail(_ context.Context, email string) (model.User, error) {
	u, ok := s.users[email]
	if !ok {
		return model.User{}, errs.ErrNotFound
	}
	return u, nil
}

func (s *resetStore) CreatePasswordReset(_ context.Context, user model.UserID, _ []byte, _, _ time.Time) error {
	s.resets = append(s.resets, user)
	return nil
}

type recordingSender struct{ to []string }

func (r *recordingSender) Send(_ context.Context, msg mailer.Message) error {
	r.to = append(r.to, msg.To)
	return nil
}

// A server that stops still sends the links asked for before it stopped:
// Run, with its context already ended, sends every queued one (for the
// accounts among them) before it returns.
func TestResetsAskedForBeforeAStopAreSent(t *testing.T) {
	store := &resetStore{users: map[string]model.User{
		"a@example.com": {ID: "u1", Email: "a@example.com"}, "b@example.com": {ID: "u2", Email: "b@example.com"}}}
	sender := &recordingSender{}
	var logged bytes.Buffer
	s := NewService(store, nil, nil, nil, time.Now, slog.New(slog.NewTextHandler(&logged, nil)),
		WithMail(Mail{Sender: sender, From: "tally@example.com", PublicURL: "https://x.example"}))
	for _, email := range []string{"a@example.com", "nobody@example.com", "b@example.com"} {
		s.RequestReset(email)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s.Run(ctx)
	if !slices.Equal(sender.to, []string{"a@example.com", "b@example.com"}) || !slices.Equal(store.resets, []model.UserID{"u1", "u2"}) {
		t.Errorf("sent to %v, resets for %v; want a@ and b@, u1 and u2", sender.to, store.resets)
	}
	if len(s.queue) != 0 || strings.Contains(logged.String(), "not sent") {
		t.Errorf("%d left in the queue; logged %q", len(s.queue), logged.String())
	}
}
