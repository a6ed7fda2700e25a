package mailer

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
)

// Message is an email of a plain-text part and an HTML part (the same
// content; mail readers show the one they can).
type Message struct {
	// From is the From header ("tally <reports@example.com>").
	From string
	// To is the one recipient's address.
	To      string
	Subject string
	Text    string
	HTML    string
	// Unsubscribe, when set, is the http(s) URL that takes the recipient
	// off the list: the List-Unsubscribe header (RFC 2369), and with an
	// https URL the one-click List-Unsubscribe-Post (RFC 8058), by which a
	// mail reader unsubscribes with a POST and no page in between.
	Unsubscribe string
}

// Bytes is the message as sent: headers, then multipart/alternative with
// each part quoted-printable, CRLF line ends.
func (m Message) Bytes(now time.Time) ([]byte, error) {
	from, err := mail.ParseAddress(m.From)
	if err != nil {
		return nil, errors.New("mailer: the From address is not an address")
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil || strings.ContainsAny(m.Subject, "\r\n") {
		return nil, errors.New("mailer: the recipient or the subject is not fit for a header")
	}
	if m.Unsubscribe != "" && !headerURL(m.Unsubscribe) {
		return nil, errors.New("mailer: the unsubscribe URL is not fit for a header")
	}
	var body bytes.Buffer
	parts := multipart.NewWriter(&body)
	for _, p := range []struct{ typ, content string }{{"text/plain", m.Text}, {"text/html", m.HTML}} {
		w, err := parts.CreatePart(textproto.MIMEHeader{"Content-Type": {p.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"}})
		if err != nil {
			return nil, err
		}
		qp := quotedprintable.NewWriter(w)
		if _, err := qp.Write([]byte(strings.ReplaceAll(p.content, "\r\n", "\n"))); err != nil {
			return nil, err
		}
		if err := qp.Close(); err != nil {
			return nil, err
		}
	}
	if err := parts.Close(); err != nil {
		return nil, err
	}
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	headers := [][2]string{
		{"From", from.String()},
		{"To", to.String()},
		{"Subject", mime.QEncoding.Encode("utf-8", m.Subject)},
		{"Date", now.Format(time.RFC1123Z)},
		{"Message-ID", "<" + rand.Text() + "@" + domain + ">"},
		{"MIME-Version", "1.0"},
		{"Content-Type", `multipart/alternative; boundary="` + parts.Boundary() + `"`},
		// an automatic message: no out-of-office replies to it
		{"Auto-Submitted", "auto-generated"},
	}
	if m.Unsubscribe != "" {
		headers = append(headers, [2]string{"List-Unsubscribe", "<" + m.Unsubscribe + ">"})
		// RFC 8058 one-click is for HTTPS URLs only; a mail reader ignores
		// it on others, and still offers the link
		if strings.HasPrefix(m.Unsubscribe, "https://") {
			headers = append(headers, [2]string{"List-Unsubscribe-Post", "List-Unsubscribe=One-Click"})
		}
	}
	var out bytes.Buffer
	for _, h := range headers {
		fmt.Fprintf(&out, "%s: %s\r\n", h[0], h[1])
	}
	out.WriteString("\r\n")
	out.Write(body.Bytes())
	return out.Bytes(), nil
}

// headerURL reports whether u is an absolute http(s) URL that fits between
// a header's angle brackets on one line: printable ASCII without spaces,
// angle brackets or commas (RFC 2369 separates URLs with them).
func headerURL(u string) bool {
	if (!strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "http://")) || len(u) > 900 {
		return false
	}
	for i := 0; i < len(u); i++ {
		if c := u[i]; c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == ',' {
			return false
		}
	}
	return true
}
