package main

import (
	"fmt"
	"strings"
	"time"
)

// scenarios are the faults, in the order they run. Each run starts tally,
// breaks it while mixed traffic flows, mends what it broke; the runner then
// stops tally cleanly and counts.
func scenarios(o options) []scenario {
	d := o.load
	outage := func(name, what string, proxy func(r *run) interface {
		Down()
		Up()
	}) scenario {
		return scenario{name: name, what: what, runs: o.runs, run: func(r *run) error {
			if err := r.start(); err != nil {
				return err
			}
			r.load(d / 2)
			return r.whileLoaded(0, func() error {
				proxy(r).Down()
				time.Sleep(2 * d)
				proxy(r).Up()
				time.Sleep(d / 2)
				return nil
			})
		}}
	}
	return []scenario{
		{name: "kill-at-flush", runs: o.killRuns,
			what: "kill -9 at a random step of a flush (after the 1st to 4th write of its plan or checkpoint, plus up to 3 ms), restart, more traffic",
			run: func(r *run) error {
				if err := r.start(); err != nil {
					return err
				}
				if err := r.whileLoaded(d/2, r.killAtFlush); err != nil {
					return err
				}
				return r.again(d / 2)
			}},
		{name: "sigterm-under-load", runs: o.runs,
			what: "SIGTERM while traffic flows (the drain runs with requests still arriving), restart, more traffic",
			run: func(r *run) error {
				if err := r.start(); err != nil {
					return err
				}
				if err := r.whileLoaded(d, r.term); err != nil {
					return err
				}
				return r.again(d / 2)
			}},
		{name: "kill-during-clickhouse-outage", runs: o.runs,
			what: "ClickHouse away, kill -9 with batches waiting, restart while ClickHouse is still away, more traffic, ClickHouse back",
			run: func(r *run) error {
				if err := r.start(); err != nil {
					return err
				}
				r.load(d / 2)
				r.ch.Down()
				if err := r.whileLoaded(d, r.kill); err != nil {
					return err
				}
				if err := r.again(d / 2); err != nil {
					return err
				}
				time.Sleep(d / 2)
				r.ch.Up()
				return nil
			}},
		outage("clickhouse-outage", "ClickHouse away for 2× the load phase under traffic, then back",
			func(r *run) interface {
				Down()
				Up()
			} {
				return r.ch
			}),
		outage("redis-outage", "Redis away for 2× the load phase under traffic (batches wait in the WAL for their sessions), then back",
			func(r *run) interface {
				Down()
				Up()
			} {
				return r.redis
			}),
		outage("postgres-outage", "Postgres away for 2× the load phase under traffic (cached keys keep working), then back",
			func(r *run) interface {
				Down()
				Up()
			} {
				return r.pg
			}),
		{name: "small-wal-budget", runs: o.runs, env: []string{"TALLY_WAL_MAX_BYTES=4194304", "TALLY_WAL_SEGMENT_BYTES=1048576"},
			what: "a 4 MiB write-ahead-log budget with ClickHouse away: the log fills and events are refused (503), then ClickHouse is back",
			run: func(r *run) error {
				if err := r.start(); err != nil {
					return err
				}
				r.ch.Down()
				return r.whileLoaded(2*d, func() error {
					if r.sender.Ledger.Refused() == 0 {
						return fmt.Errorf("nothing was refused: the budget was never reached")
					}
					r.ch.Up()
					time.Sleep(d)
					return nil
				})
			}},
	}
}

func scenarioList() string {
	var b strings.Builder
	for _, sc := range scenarios(options{runs: 5, killRuns: 20, load: 1500 * time.Millisecond}) {
		fmt.Fprintf(&b, "  %-30s %s\n", sc.name, sc.what)
	}
	return b.String()
}
