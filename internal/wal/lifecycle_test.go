package wal

import (
	"context"
	"errors"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// gate blocks the writer inside its first fsync until released, or until
// the test ends.
type gate struct {
	entered chan struct{}
	release chan struct{}
	done    <-chan struct{}
}

func newGate(t *testing.T) *gate {
	return &gate{entered: make(chan struct{}, 1), release: make(chan struct{}), done: t.Context().Done()}
}

func (g *gate) hook() error {
	select {
	case g.entered <- struct{}{}:
	default:
	}
	select {
	case <-g.release:
	case <-g.done:
	}
	return nil
}

func openHooked(t *testing.T, opts Options, h hooks) *Log {
	t.Helper()
	l, err := open(opts, h)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// eventually polls cond until it holds, failing the test after a while.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// queuedBytes counts the bytes queued or being committed.
func queuedBytes(l *Log) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reserved - l.size
}

type appendResult struct {
	end Position
	err error
}

func appendAsync(ctx context.Context, l *Log, p string) chan appendResult {
	ch := make(chan appendResult, 1)
	go func() {
		end, err := l.Append(ctx, []byte(p))
		ch <- appendResult{end, err}
	}()
	return ch
}

func TestWait(t *testing.T) {
	tests := []struct {
		name    string
		act     func(l *Log, cancel context.CancelFunc)
		wantErr error
	}{
		{name: "append", act: func(l *Log, _ context.CancelFunc) { l.Append(context.Background(), []byte("x")) }},
		{name: "context canceled", act: func(_ *Log, cancel context.CancelFunc) { cancel() }, wantErr: context.Canceled},
		{name: "close", act: func(l *Log, _ context.CancelFunc) { l.Close() }, wantErr: ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openLog(t, Options{Dir: t.TempDir()})
			appendAll(t, l, []string{"first"})
			if err := l.Wait(context.Background(), Position{}); err != nil {
				t.Fatalf("Wait for a durable position: %v", err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- l.Wait(ctx, l.Durable()) }()
			select {
			case err := <-done:
				t.Fatalf("Wait returned %v before anything happened", err)
			case <-time.After(20 * time.Millisecond):
			}
			tt.act(l, cancel)
			select {
			case err := <-done:
				if !errors.Is(err, tt.wantErr) {
					t.Errorf("Wait: %v, want %v", err, tt.wantErr)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Wait did not return")
			}
		})
	}
}

func TestWaitEmptyLog(t *testing.T) {
	l := openLog(t, Options{Dir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := l.Wait(ctx, Position{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait on an empty log: %v, want it to block", err)
	}
}

func TestClose(t *testing.T) {
	dir := t.TempDir()
	g := newGate(t)
	l := openHooked(t, Options{Dir: dir}, hooks{beforeSync: g.hook})
	ctx := context.Background()

	first := appendAsync(ctx, l, "first")
	<-g.entered // the writer is inside the first commit
	queued := []chan appendResult{appendAsync(ctx, l, "second"), appendAsync(ctx, l, "third")}
	eventually(t, "three appends are in flight", func() bool {
		return queuedBytes(l) == int64(3*headerSize+len("first")+len("second")+len("third"))
	})

	closed := make(chan error, 1)
	go func() { closed <- l.Close() }()
	eventually(t, "Close began", func() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.closing })
	if _, err := l.Append(ctx, []byte("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append during Close: %v, want ErrClosed", err)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned %v before the queued appends were committed", err)
	default:
	}
	close(g.release)
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	for i, ch := range append([]chan appendResult{first}, queued...) {
		if res := <-ch; res.err != nil {
			t.Errorf("append %d: %v", i, res.err)
		}
	}

	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := l.Append(ctx, []byte("after")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if err := l.TruncateBefore(l.Durable()); !errors.Is(err, ErrClosed) {
		t.Errorf("TruncateBefore after Close: %v, want ErrClosed", err)
	}
	if err := l.Wait(ctx, l.Durable()); !errors.Is(err, ErrClosed) {
		t.Errorf("Wait after Close: %v, want ErrClosed", err)
	}
	// Readers still work, and so does a reopened log.
	var got []string
	for _, r := range readAll(t, l, Position{}) {
		got = append(got, r.Payload)
	}
	slices.Sort(got[1:]) // the second and third raced
	if diff := cmp.Diff([]string{"first", "second", "third"}, got); diff != "" {
		t.Errorf("records after Close (-want +got):\n%s", diff)
	}
	l2 := openLog(t, Options{Dir: dir})
	if n := len(readAll(t, l2, Position{})); n != 3 {
		t.Errorf("reopened log holds %d records, want 3", n)
	}
}

func TestAppendCancel(t *testing.T) {
	tests := []struct {
		name       string
		cancelTook bool // cancel the append the writer already took, not a queued one
		want       []string
	}{
		{name: "queued record is dropped", want: []string{"first"}},
		{name: "record being written stays", cancelTook: true, want: []string{"first", "second"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGate(t)
			l := openHooked(t, Options{Dir: t.TempDir(), MaxBytes: 1 << 20}, hooks{beforeSync: g.hook})
			firstCtx, cancelFirst := context.WithCancel(context.Background())
			defer cancelFirst()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			first := appendAsync(firstCtx, l, "first")
			<-g.entered
			second := appendAsync(ctx, l, "second")
			eventually(t, "the second append is queued", func() bool { return queuedBytes(l) == int64(2*headerSize+len("first")+len("second")) })
			if tt.cancelTook {
				cancelFirst()
				if res := <-first; !errors.Is(res.err, context.Canceled) {
					t.Errorf("canceled Append: %v, want context.Canceled", res.err)
				}
				close(g.release)
				if res := <-second; res.err != nil {
					t.Errorf("second Append: %v", res.err)
				}
			} else {
				cancel()
				if res := <-second; !errors.Is(res.err, context.Canceled) {
					t.Errorf("canceled Append: %v, want context.Canceled", res.err)
				}
				close(g.release)
				if res := <-first; res.err != nil {
					t.Errorf("first Append: %v", res.err)
				}
			}
			eventually(t, "the writer is idle", func() bool { return queuedBytes(l) == 0 })
			var got []string
			for _, r := range readAll(t, l, Position{}) {
				got = append(got, r.Payload)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
			if _, err := l.Append(context.Background(), []byte("x")); err != nil {
				t.Errorf("Append afterwards: %v", err)
			}
		})
	}
	t.Run("context already done", func(t *testing.T) {
		l := openLog(t, Options{Dir: t.TempDir()})
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := l.Append(ctx, []byte("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("Append: %v, want context.Canceled", err)
		}
		if d := l.Durable(); d != (Position{}) {
			t.Errorf("Durable() = %v, want nothing written", d)
		}
	})
}

func TestCommitFailure(t *testing.T) {
	t.Run("ENOSPC is transient", func(t *testing.T) {
		dir := t.TempDir()
		calls := 0
		l := openHooked(t, Options{Dir: dir}, hooks{beforeSync: func() error {
			calls++
			if calls == 2 {
				return syscall.ENOSPC
			}
			return nil
		}})
		ctx := context.Background()
		want := appendAll(t, l, []string{"before"})
		if _, err := l.Append(ctx, []byte("lost")); !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("Append: %v, want ENOSPC", err)
		}
		want = append(want, appendAll(t, l, []string{"after"})...)
		if diff := cmp.Diff(want, readAll(t, l, Position{})); diff != "" {
			t.Errorf("records (-want +got):\n%s", diff)
		}
		if size, disk := l.Size(), dirBytes(t, dir); size != disk {
			t.Errorf("Size() = %d, files hold %d", size, disk)
		}
	})
	t.Run("failed repair fails the log", func(t *testing.T) {
		var l *Log
		l = openHooked(t, Options{Dir: t.TempDir()}, hooks{beforeSync: func() error {
			l.w.f.Close() // the repair's truncate fails too
			return syscall.EIO
		}})
		ctx := context.Background()
		if _, err := l.Append(ctx, []byte("x")); !errors.Is(err, syscall.EIO) {
			t.Fatalf("Append: %v, want EIO", err)
		}
		if _, err := l.Append(ctx, []byte("y")); !errors.Is(err, syscall.EIO) {
			t.Errorf("Append on a failed log: %v, want the EIO", err)
		}
		if err := l.Wait(ctx, Position{}); !errors.Is(err, syscall.EIO) {
			t.Errorf("Wait on a failed log: %v, want the EIO", err)
		}
	})
}
