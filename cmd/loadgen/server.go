package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tally-analytics/tally/internal/tallyproc"
)

// server is the tally process under test.
type server = tallyproc.Server

// procSample is a process's CPU time and resident memory at one moment.
type procSample struct {
	cpu time.Duration
	rss int64 // bytes
}

var pageSize = int64(os.Getpagesize())

// clockTick is the unit of /proc/<pid>/stat times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

func readProc(pid int) (procSample, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procSample{}, err
	}
	// the command name may hold spaces: fields start after the last ')'
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procSample{}, errors.New("unexpected /proc stat format")
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 22 {
		return procSample{}, errors.New("unexpected /proc stat format")
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	rss, _ := strconv.ParseInt(f[21], 10, 64)
	return procSample{cpu: time.Duration(utime+stime) * clockTick, rss: rss * pageSize}, nil
}

// pidsOf finds the processes whose command name starts with name.
func pidsOf(name string) []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, d := range dirs {
		comm, err := os.ReadFile(d)
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(comm)), name) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(d))); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// usage is what the monitored processes used during a phase: CPU as a
// share of one core (100% = one core busy), and tally's peak RSS.
type usage struct {
	CPU     map[string]float64 // by process group: tally, clickhouse, redis, postgres, loadgen
	PeakRSS int64
}

// monitor samples CPU and memory of tally and the stack until stopped.
type monitor struct {
	groups map[string][]int
	stopCh chan struct{}
	done   sync.WaitGroup
	peak   int64
	start  time.Time
	first  map[string]time.Duration
	last   map[string]time.Duration
}

// processGroups are the processes whose CPU the bench reports, by group:
// tally, clickhouse, redis, postgres and loadgen (this process).
func processGroups(tallyPID int) map[string][]int {
	return map[string][]int{
		"tally": {tallyPID}, "loadgen": {os.Getpid()},
		"clickhouse": pidsOf("clickhouse-serv"), "redis": pidsOf("redis-server"), "postgres": pidsOf("postgres"),
	}
}

// groupsCPU is the CPU time each group's processes have used so far.
func groupsCPU(groups map[string][]int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for g, pids := range groups {
		out[g] = cpuOf(pids)
	}
	return out
}

// cpuOf is the CPU time the processes pids have used so far.
func cpuOf(pids []int) time.Duration {
	var cpu time.Duration
	for _, pid := range pids {
		if s, err := readProc(pid); err == nil {
			cpu += s.cpu
		}
	}
	return cpu
}

// readMachineCPU reads the time of all of the machine's cores so far from
// /proc/stat: busy (all but idle and iowait: the kernel's work for the
// network and the disks included, which no process is charged for) and in
// all.
func readMachineCPU() (busy, total time.Duration, err error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0, 0, errors.New("unexpected /proc/stat format")
	}
	// user nice system idle iowait irq softirq steal (guest time is in user)
	var ticks [8]int64
	for i := range ticks {
		if ticks[i], err = strconv.ParseInt(f[i+1], 10, 64); err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
	}
	var all int64
	for _, t := range ticks {
		all += t
	}
	idle := ticks[3] + ticks[4]
	return time.Duration(all-idle) * clockTick, time.Duration(all) * clockTick, nil
}

func startMonitor(tallyPID int) *monitor {
	m := &monitor{stopCh: make(chan struct{}), groups: processGroups(tallyPID)}
	m.first, m.start = m.cpu(), time.Now()
	m.done.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			if s, err := readProc(tallyPID); err == nil {
				m.peak = max(m.peak, s.rss)
			}
			select {
			case <-m.stopCh:
				return
			case <-t.C:
			}
		}
	})
	return m
}

func (m *monitor) cpu() map[string]time.Duration { return groupsCPU(m.groups) }

func (m *monitor) stop() usage {
	close(m.stopCh)
	m.done.Wait()
	last, elapsed := m.cpu(), time.Since(m.start)
	u := usage{CPU: map[string]float64{}, PeakRSS: m.peak}
	for g := range m.groups {
		u.CPU[g] = 100 * float64(last[g]-m.first[g]) / float64(elapsed)
	}
	return u
}
