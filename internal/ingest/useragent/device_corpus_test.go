package useragent

import (
	"fmt"
	"testing"
)

// matomoDeviceClass maps device-detector's device types to tally's classes
// ("" for types tally does not report: cars, cameras, wearables…).
var matomoDeviceClass = map[string]string{
	"desktop": Desktop, "smartphone": Mobile, "phablet": Mobile, "feature phone": Mobile,
	"tablet": Tablet, "tv": TV, "console": Console,
}

// Device classes agree with Matomo device-detector's device fixtures (an
// independent corpus) for desktops, phones, tablets, TVs and consoles. The
// fixtures are chosen to be hard: most misses are models whose header says
// nothing of their class (an Android TV box that calls itself "M8S PRO" and
// "Mobile"), which device-detector knows from its own database of models.
// The floors guard what the markers reach (before them: 68 %, 86 %, 80 %,
// 0 % and 0 %).
func TestDeviceClassesAgree(t *testing.T) {
	t.Parallel()
	floor := map[string]float64{"desktop.yml": 75, "smartphone.yml": 85, "tablet.yml": 80, "tv.yml": 60, "console.yml": 50}
	p, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"desktop.yml", "smartphone.yml", "tablet.yml", "tv.yml", "console.yml"} {
		n, agree := 0, 0
		var misses []string
		for _, c := range matomo(t, file) {
			want, ok := matomoDeviceClass[c.Device.Type]
			if !ok || c.Bot.Category != "" {
				continue
			}
			n++
			info := p.parse(clean(c.UA))
			if info.Device == want {
				agree++
			} else if len(misses) < 15 {
				misses = append(misses, fmt.Sprintf("%s, want %s: %s", info.Device, want, c.UA))
			}
		}
		got := percent(agree, n)
		t.Logf("%s: %d of %d agree (%.2f %%)", file, agree, n, got)
		if got < floor[file] {
			t.Errorf("%s: %.2f %% of device classes agree, want ≥ %.0f %%; for example:\n%s", file, got, floor[file], join(misses))
		}
	}
}
