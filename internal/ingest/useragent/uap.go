package useragent

import (
	"github.com/ua-parser/uap-go/uaparser"
)

// uapRules run uap-core's rules as uap-go compiled them, in their order and
// with uap-go's own matching, but each behind the words it needs (see
// required): uap-go tries every rule in turn, hundreds of regexps for a header
// no device rule names, which costs most of a millisecond per new header.
// The answers are uap-go's: a rule whose words are missing cannot match.
type uapRules struct {
	defs           *uaparser.RegexDefinitions
	ua, os, device [][][]int32 // each rule's clauses, by index
}

func newUAPRules(p *uaparser.Parser, x *words) *uapRules {
	r := &uapRules{defs: p.RegexDefinitions}
	for _, d := range r.defs.UA {
		r.ua = append(r.ua, x.add(required(withFlags(d.Flags, d.Expr))))
	}
	for _, d := range r.defs.OS {
		r.os = append(r.os, x.add(required(withFlags(d.Flags, d.Expr))))
	}
	for _, d := range r.defs.Device {
		r.device = append(r.device, x.add(required(withFlags(d.Flags, d.Expr))))
	}
	return r
}

// withFlags writes a rule as uap-go compiles it.
func withFlags(flags, expr string) string {
	if flags == "" {
		return expr
	}
	return "(?" + flags + ")" + expr
}

// parse is uap-go's Parse without its caches: the first rule of each kind
// that matches names it, "Other" when none does. found are the words line
// holds.
func (r *uapRules) parse(line string, found []bool) (ua uaparser.UserAgent, os uaparser.Os, dvc uaparser.Device) {
	for i, d := range r.defs.UA {
		if holds(found, r.ua[i]) {
			if d.Match(line, &ua); ua.Family != "" {
				break
			}
		}
	}
	for i, d := range r.defs.OS {
		if holds(found, r.os[i]) {
			if d.Match(line, &os); os.Family != "" {
				break
			}
		}
	}
	for i, d := range r.defs.Device {
		if holds(found, r.device[i]) {
			if d.Match(line, &dvc); dvc.Family != "" {
				break
			}
		}
	}
	ua.Family, os.Family, dvc.Family = orOther(ua.Family), orOther(os.Family), orOther(dvc.Family)
	return ua, os, dvc
}

func orOther(family string) string {
	if family == "" {
		return "Other"
	}
	return family
}
