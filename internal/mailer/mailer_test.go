package mailer_test

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/tally-analytics/tally/internal/mailer"
	"github.com/tally-analytics/tally/internal/mailer/smtptest"
)

func TestParseURL(t *testing.T) {
	for raw, want := range map[string]mailer.Server{
		"smtp://mail.example.com":                {Host: "mail.example.com", Port: "587"},
		"smtp://u:p%40ss@mail.example.com:2525":  {Host: "mail.example.com", Port: "2525", Username: "u", Password: "p@ss"},
		"smtps://apikey:secret@smtp.example.com": {Host: "smtp.example.com", Port: "465", ImplicitTLS: true, Username: "apikey", Password: "secret"},
		"smtp://user@[::1]:25/":                  {Host: "::1", Port: "25", Username: "user"},
	} {
		got, err := mailer.ParseURL(raw)
		if err != nil || got != want {
			t.Errorf("ParseURL(%s) = %+v, %v; want %+v", raw, got, err, want)
		}
	}
	for _, raw := range []string{"", "mail.example.com:587", "http://mail.example.com", "smtp://", "smtp://:pw@host",
		"smtp://host:0", "smtp://host:99999", "smtp://host:x", "smtp://host/path", "smtp://host?tls=off", "smtp://u:pw@ho st"} {
		_, err := mailer.ParseURL(raw)
		if !errors.Is(err, mailer.ErrURL) {
			t.Errorf("ParseURL(%q) = %v, want ErrURL", raw, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("the refusal of %q quotes it: %v", raw, err)
		}
	}
}

func server(t *testing.T, addr, user, password string) mailer.Server {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return mailer.Server{Host: host, Port: port, Username: user, Password: password}
}

// A message reaches the server whole: envelope, headers, both parts.
func TestSend(t *testing.T) {
	srv := smtptest.Start(t, "tally", "smtp-password-1")
	m := mailer.New(server(t, srv.Addr, "tally", "smtp-password-1"), "reports@tally.example")
	msg := mailer.Message{From: "tally <reports@tally.example>", To: "reader@reports.example", Subject: "Weekly report · café.example",
		Text: "Visitors 12\nA line that is long enough to be wrapped by quoted-printable encoding, which wraps at 76 characters.\n",
		HTML: `<p style="color:#333">Visitors <strong>12</strong></p>`}
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := srv.Received()
	if len(got) != 1 || got[0].From != "reports@tally.example" || strings.Join(got[0].To, ",") != "reader@reports.example" {
		t.Fatalf("received %+v", got)
	}
	parsed, err := mail.ReadMessage(strings.NewReader(got[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(parsed.Header.Get("Subject"))
	if subject != msg.Subject || parsed.Header.Get("To") != "<reader@reports.example>" || parsed.Header.Get("Auto-Submitted") != "auto-generated" {
		t.Errorf("headers %v (subject %q)", parsed.Header, subject)
	}
	_, params, err := mime.ParseMediaType(parsed.Header.Get("Content-Type"))
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(parsed.Body, params["boundary"])
	for _, want := range []struct{ typ, body string }{{"text/plain; charset=utf-8", msg.Text}, {"text/html; charset=utf-8", msg.HTML}} {
		p, err := r.NextPart() // quoted-printable is decoded by the reader
		if err != nil {
			t.Fatal(err)
		}
		buf := new(strings.Builder)
		if _, err := io.Copy(buf, p); err != nil {
			t.Fatal(err)
		}
		if p.Header.Get("Content-Type") != want.typ || strings.ReplaceAll(buf.String(), "\r\n", "\n") != want.body {
			t.Errorf("part %s: %q, want %q", p.Header.Get("Content-Type"), buf.String(), want.body)
		}
	}
}

// A refused message and a wrong password are errors that say the step and
// the reply code, never the password.
func TestSendFailures(t *testing.T) {
	srv := smtptest.Start(t, "tally", "smtp-password-1")
	msg := mailer.Message{From: "reports@tally.example", To: "reader@reports.example", Subject: "s", Text: "t", HTML: "<p>h</p>"}
	srv.Refuse(1)
	err := mailer.New(server(t, srv.Addr, "tally", "smtp-password-1"), "reports@tally.example").Send(context.Background(), msg)
	var e *mailer.Error
	if !errors.As(err, &e) || e.Brief() != "DATA 451" || mailer.Unknown(err) {
		t.Errorf("a refused message: %v, want a DATA 451 error, the outcome known", err)
	}
	err = mailer.New(server(t, srv.Addr, "tally", "wrong-smtp-password"), "reports@tally.example").Send(context.Background(), msg)
	if !errors.As(err, &e) || e.Brief() != "AUTH 535" || strings.Contains(err.Error(), "wrong-smtp-password") {
		t.Errorf("a wrong password: %v, want an AUTH 535 error without the password", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := mailer.New(server(t, "127.0.0.1:1", "", ""), "reports@tally.example").Send(ctx, msg); !errors.As(err, &e) || e.Step != "connect" ||
		mailer.Unknown(err) {
		t.Errorf("no server: %v, want a connect error", err)
	}
	if len(srv.Received()) != 0 {
		t.Errorf("received %d messages", len(srv.Received()))
	}
}

// A message with an unsubscribe URL carries it in List-Unsubscribe, and
// with an https URL the one-click List-Unsubscribe-Post; without one it
// has neither header; a URL that could break the header is refused.
func TestUnsubscribeHeaders(t *testing.T) {
	at := time.Date(2026, 6, 8, 4, 0, 0, 0, time.UTC)
	base := mailer.Message{From: "tally <reports@tally.example>", To: "reader@reports.example", Subject: "s", Text: "t", HTML: "<p>h</p>"}
	for _, tc := range []struct {
		url, list, post string
	}{
		{"https://analytics.example.com/email-reports/unsubscribe?token=abc_-9", "<https://analytics.example.com/email-reports/unsubscribe?token=abc_-9>",
			"List-Unsubscribe=One-Click"},
		{"http://localhost:8080/email-reports/unsubscribe?token=abc", "<http://localhost:8080/email-reports/unsubscribe?token=abc>", ""},
		{"", "", ""},
	} {
		msg := base
		msg.Unsubscribe = tc.url
		data, err := msg.Bytes(at)
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := mail.ReadMessage(strings.NewReader(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if got := parsed.Header.Get("List-Unsubscribe"); got != tc.list {
			t.Errorf("%q: List-Unsubscribe %q, want %q", tc.url, got, tc.list)
		}
		if got := parsed.Header.Get("List-Unsubscribe-Post"); got != tc.post {
			t.Errorf("%q: List-Unsubscribe-Post %q, want %q", tc.url, got, tc.post)
		}
	}
	for _, bad := range []string{"https://a.example/u?t=1\r\nBcc: x@evil.example", "https://a.example/u?t=1>, <https://b.example/",
		"mailto:unsubscribe@a.example", "https://a.example/ u", "/email-reports/unsubscribe?token=abc"} {
		msg := base
		msg.Unsubscribe = bad
		if _, err := msg.Bytes(at); err == nil {
			t.Errorf("the unsubscribe URL %q was put in a header", bad)
		}
	}
}

// A message handed over whole whose reply never comes is an error whose
// outcome is unknown (the server did queue it here); the next message,
// answered, is sent as ever.
func TestSendWithoutReply(t *testing.T) {
	srv := smtptest.Start(t, "tally", "smtp-password-1")
	msg := mailer.Message{From: "reports@tally.example", To: "reader@reports.example", Subject: "s", Text: "t", HTML: "<p>h</p>"}
	m := mailer.New(server(t, srv.Addr, "tally", "smtp-password-1"), "reports@tally.example", mailer.WithTimeout(2*time.Second))
	srv.Silence(1)
	err := m.Send(context.Background(), msg)
	var e *mailer.Error
	if !errors.As(err, &e) || !mailer.Unknown(err) || e.Brief() != "DATA no reply" || e.Code != 0 {
		t.Fatalf("a message without reply: %v, want a DATA error whose outcome is unknown", err)
	}
	if !strings.Contains(err.Error(), "may have been queued") || strings.Contains(err.Error(), "smtp-password-1") {
		t.Errorf("the error says %q", err)
	}
	if err := m.Send(context.Background(), msg); err != nil {
		t.Fatalf("the next message: %v", err)
	}
	if n := len(srv.Received()); n != 2 {
		t.Errorf("the server has %d messages, want the unanswered one and the next", n)
	}
}
