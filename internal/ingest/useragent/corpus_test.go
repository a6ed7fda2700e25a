package useragent

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// uapFixtures reads one of uap-core's own test files (vendored with the
// rules by scripts/vendor-uap-core.sh): user agents and the family uap-core
// expects for them.
func uapFixtures(t *testing.T, name string) []struct {
	UA     string `yaml:"user_agent_string"`
	Family string `yaml:"family"`
} {
	t.Helper()
	data, err := os.ReadFile("testdata/uap-core/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Cases []struct {
			UA     string `yaml:"user_agent_string"`
			Family string `yaml:"family"`
		} `yaml:"test_cases"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) < 400 {
		t.Fatalf("%s holds %d cases", name, len(f.Cases))
	}
	return f.Cases
}

// Browser family and OS agree with uap-core's current fixtures (after the
// dashboard's folding of per-platform names, which applies to both sides)
// for at least 99 % of them.
func TestUAPCoreFixturesAgree(t *testing.T) {
	t.Parallel()
	p, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		got  func(Info) string
		want func(string) string
	}{
		{"test_ua.yaml", func(i Info) string { return i.Browser }, browserName},
		{"test_os.yaml", func(i Info) string { return i.OS }, osName},
	} {
		cases := uapFixtures(t, tc.file)
		agree := 0
		var misses []string
		for _, c := range cases {
			got := tc.got(p.parse(truncate(c.UA, MaxLength)))
			if got == tc.want(c.Family) {
				agree++
			} else if len(misses) < 15 {
				misses = append(misses, got+" ≠ "+tc.want(c.Family)+": "+c.UA)
			}
		}
		share := float64(agree) / float64(len(cases)) * 100
		t.Logf("%s: %d of %d agree (%.2f %%)", tc.file, agree, len(cases), share)
		if share < 99 {
			t.Errorf("%s: %.2f %% agree, want ≥ 99 %%; for example:\n%s", tc.file, share, join(misses))
		}
	}
}

func join(lines []string) string {
	s := ""
	for _, l := range lines {
		s += "  " + l + "\n"
	}
	return s
}
