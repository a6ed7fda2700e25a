package app

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// A server that stops listening because it stops logs no warning; one that
// loses the connection while running does.
func TestAccessListeningLog(t *testing.T) {
	var out bytes.Buffer
	a := &App{log: slog.New(slog.NewTextHandler(&out, nil))}

	running := a.logAccessListening(context.Background())
	running(true)
	running(false)
	if !strings.Contains(out.String(), "level=WARN msg=\"not hearing") {
		t.Errorf("a lost connection was not logged:\n%s", out.String())
	}

	out.Reset()
	ctx, stop := context.WithCancel(context.Background())
	stopping := a.logAccessListening(ctx)
	stopping(true)
	stop()
	stopping(false)
	if strings.Contains(out.String(), "WARN") {
		t.Errorf("a stop was logged as a lost connection:\n%s", out.String())
	}
}
