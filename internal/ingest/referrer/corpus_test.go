package referrer

import (
	"os"
	"testing"

	"gopkg.in/yaml.v3"
)

// snowplow reads a medium of snowplow's referer-parser list (vendored as
// test data: a measurement, not a source of the product's list): source
// name → its domains.
func snowplow(t *testing.T, medium string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile("testdata/snowplow/referers.yml")
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]map[string]struct {
		Domains []string `yaml:"domains"`
	}
	if err := yaml.Unmarshal(data, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for name, s := range all[medium] {
		out[name] = s.Domains
	}
	if len(out) < 50 {
		t.Fatalf("snowplow's %s section holds %d sources", medium, len(out))
	}
	return out
}

// At least 95 % of snowplow's social domains are classified social.
func TestSnowplowSocialDomains(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	total, social := 0, 0
	var misses []string
	for name, domains := range snowplow(t, "social") {
		for _, d := range domains {
			total++
			if got := c.FromHost(d); got.Type == Social {
				social++
			} else {
				misses = append(misses, d+" ("+name+") → "+string(got.Type)+" "+got.Name)
			}
		}
	}
	share := float64(social) / float64(total) * 100
	t.Logf("%d of %d social domains classified social (%.1f %%); missed: %v", social, total, share, misses)
	if share < 95 {
		t.Errorf("%.1f %% of snowplow's social domains are social, want ≥ 95 %%; missed:\n%v", share, misses)
	}
}

// Apps (android-app://<package>/ referrers), a network's country domains and
// messengers are social under the network's name; look-alikes are not.
func TestSocialAppsAndBrands(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]Source{
		"com.facebook.katana":        {Name: "Facebook", Type: Social},
		"com.instagram.android":      {Name: "Instagram", Type: Social},
		"com.whatsapp":               {Name: "WhatsApp", Type: Social},
		"org.telegram.messenger":     {Name: "Telegram", Type: Social},
		"org.telegram.messenger.web": {Name: "Telegram", Type: Social},
		"web.telegram.org":           {Name: "Telegram", Type: Social},
		"pinterest.co.uk":            {Name: "Pinterest", Type: Social},
		"www.pinterest.com.mx":       {Name: "Pinterest", Type: Social},
		"app.slack.com":              {Name: "Slack", Type: Social},
		"www.tiktok.com":             {Name: "TikTok", Type: Social},
		"l.threads.net":              {Name: "Threads", Type: Social},
		"pinterest.example.com":      {Name: "pinterest.example.com", Type: Referral},
		"notpinterest.de":            {Name: "notpinterest.de", Type: Referral},
		"org.example.app":            {Name: "org.example.app", Type: Referral},
	} {
		if got := c.FromHost(host); got != want {
			t.Errorf("FromHost(%q) = %+v, want %+v", host, got, want)
		}
	}
}
