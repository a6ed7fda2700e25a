package soak

import "testing"

// A run keeps its promise only when every count that measures a breach is
// zero and the stored rows add up; runs add up field by field.
func TestCounts(t *testing.T) {
	good := Counts{Acknowledged: 10, Refused: 3, CutOff: 2, CutStored: 1, Stored: 11, Sessions: 4, Bots: 2, Revenue: 1, Scrolls: 3}
	if !good.OK() {
		t.Errorf("%v: not OK", good)
	}
	for name, bad := range map[string]func(*Counts){
		"missing":        func(c *Counts) { c.Missing = 1 },
		"doubled":        func(c *Counts) { c.Doubled = 1 },
		"refused stored": func(c *Counts) { c.RefusedStored = 1 },
		"rows off":       func(c *Counts) { c.Stored = 12 },
		"other answer":   func(c *Counts) { c.Other = 1 },
		"session sign":   func(c *Counts) { c.BadSign = 1 },
		"session at 0":   func(c *Counts) { c.ZeroWithEvents = 1 },
		"session counts": func(c *Counts) { c.WrongCounts = 1 },
		"bot missing":    func(c *Counts) { c.BotsMissing = 1 },
		"payment extra":  func(c *Counts) { c.RevenueExtra = 1 },
		"scroll missing": func(c *Counts) { c.ScrollsMissing = 1 },
		"scroll doubled": func(c *Counts) { c.ScrollsDoubled = 1 },
		"scroll refused": func(c *Counts) { c.ScrollsRefusedStored = 1 },
	} {
		c := good
		bad(&c)
		if c.OK() {
			t.Errorf("%s: %v passes", name, c)
		}
	}
	var sum Counts
	sum.Add(good)
	sum.Add(good)
	want := Counts{Acknowledged: 20, Refused: 6, CutOff: 4, CutStored: 2, Stored: 22, Sessions: 8, Bots: 4, Revenue: 2, Scrolls: 6}
	if sum != want || !sum.OK() {
		t.Errorf("two runs add up to %+v, want %+v", sum, want)
	}
}
