package model

import (
	"errors"
	"strings"
	"time"
)

// LoadZone loads an IANA time zone by its name, as sites and reports take
// them. Names that are files of the zone database but no zone are refused:
// "Local" and "localtime" (the server's own zone), "Factory", "posixrules",
// and the "posix/" and "right/" trees (copies, the latter counting leap
// seconds, which ClickHouse does not).
func LoadZone(name string) (*time.Location, error) {
	switch {
	case name == "" || name == "Local" || name == "localtime" || name == "Factory" || name == "posixrules",
		strings.HasPrefix(name, "posix/") || strings.HasPrefix(name, "right/"):
		return nil, errNoZone
	}
	return time.LoadLocation(name)
}

var errNoZone = errors.New("not an IANA time zone")
