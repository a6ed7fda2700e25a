package model

import "testing"

func TestLoadZone(t *testing.T) {
	for _, name := range []string{"UTC", "Europe/Berlin", "America/Santiago", "Asia/Kathmandu", "Etc/GMT-14"} {
		if loc, err := LoadZone(name); err != nil || loc.String() != name {
			t.Errorf("%s: %v, %v", name, loc, err)
		}
	}
	for _, name := range []string{"", "Local", "localtime", "Factory", "posixrules", "right/UTC", "posix/Europe/Berlin", "Mars/Olympus"} {
		if _, err := LoadZone(name); err == nil {
			t.Errorf("%q loaded as a time zone", name)
		}
	}
}
