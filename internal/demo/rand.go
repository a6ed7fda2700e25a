package demo

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/google/uuid"
)

type weighted[T any] struct {
	v T
	w float64
}

// chooser picks items by weight.
type chooser[T any] struct {
	items []T
	cum   []float64 // running totals of the weights
}

func choose[T any](items ...weighted[T]) chooser[T] {
	c := chooser[T]{items: make([]T, len(items)), cum: make([]float64, len(items))}
	total := 0.0
	for i, it := range items {
		total += it.w
		c.items[i], c.cum[i] = it.v, total
	}
	return c
}

func (c chooser[T]) pick(r *rand.Rand) T {
	x := r.Float64() * c.cum[len(c.cum)-1]
	i := sort.Search(len(c.cum), func(i int) bool { return c.cum[i] > x })
	return c.items[min(i, len(c.items)-1)]
}

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// clamp keeps a probability within [lo, hi].
func clamp(p, lo, hi float64) float64 { return max(lo, min(hi, p)) }

// seconds draws a duration around a median number of seconds (log-normal:
// most visitors near it, a few much longer), between 2 s and 30 min.
func seconds(r *rand.Rand, median float64) time.Duration {
	s := median * math.Exp(0.6*r.NormFloat64())
	return time.Duration(clamp(s, 2, 1800) * float64(time.Second)).Truncate(time.Second)
}

// hours draws an exponential delay with the given mean in hours.
func hours(r *rand.Rand, mean float64) time.Duration {
	return time.Duration(r.ExpFloat64() * mean * float64(time.Hour))
}

// newUUID is a version 4 UUID drawn from r, so that a seed gives the same ids.
func newUUID(r *rand.Rand) string {
	var u uuid.UUID
	for i := 0; i < 16; i += 8 {
		x := r.Uint64()
		for j := range 8 {
			u[i+j] = byte(x >> (8 * j))
		}
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u.String()
}

// clientID is a visitor id as the tracking script makes one (analytics_vid:
// 16 random bytes in hex).
func clientID(r *rand.Rand) string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		x := r.Uint64()
		for j := range 8 {
			b[i+j] = byte(x >> (8 * j))
		}
	}
	return hex.EncodeToString(b[:])
}

// token is n characters of alphabet drawn from r (the providers' ids).
func token(r *rand.Rand, alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

const (
	base62     = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	lowerAlnum = "0123456789abcdefghijklmnopqrstuvwxyz"
	digits     = "0123456789"
)
