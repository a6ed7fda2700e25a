package useragent

import "strings"

// browserNames folds uap-core's per-platform browser families into the one
// name a dashboard shows (as Plausible and Umami do): a visitor on Chrome is
// on "Chrome" whether on a phone, an iPhone or inside a WebView.
var browserNames = map[string]string{
	"Chrome Mobile":              "Chrome",
	"Chrome Mobile iOS":          "Chrome",
	"Chrome Mobile WebView":      "Chrome",
	"Mobile Safari":              "Safari",
	"Mobile Safari UI/WKWebView": "Safari",
	"Firefox Mobile":             "Firefox",
	"Firefox iOS":                "Firefox",
	"Edge Mobile":                "Edge",
	"Opera Mobile":               "Opera",
	"Other":                      "",
}

func browserName(family string) string {
	if name, ok := browserNames[family]; ok {
		return name
	}
	return family
}

var osNames = map[string]string{
	"Mac OS X":  "macOS",
	"Chrome OS": "ChromeOS",
	"Other":     "",
}

func osName(family string) string {
	if name, ok := osNames[family]; ok {
		return name
	}
	return family
}

// desktopOS lists the operating systems whose devices count as Desktop when
// nothing marks them as a phone or tablet.
var desktopOS = map[string]bool{
	"Windows": true, "macOS": true, "Linux": true, "ChromeOS": true,
	"Ubuntu": true, "Debian": true, "Fedora": true, "Red Hat": true, "Linux Mint": true,
	"Arch Linux": true, "openSUSE": true, "Gentoo": true, "Slackware": true, "CentOS": true,
	"FreeBSD": true, "OpenBSD": true, "NetBSD": true, "Solaris": true,
}

// device classifies the hardware from the raw header, the normalised OS and
// uap-core's device family. uap-core names models ("Samsung SM-X700") rather
// than classes, so the header's own markers decide most cases.
func device(ua, os, family string) string {
	switch {
	case isTablet(ua, os, family):
		return Tablet
	case strings.Contains(ua, "Mobi") || os == "iOS" || os == "Android" || isPhoneFamily(family):
		return Mobile
	case desktopOS[os]:
		return Desktop
	default:
		return ""
	}
}

func isTablet(ua, os, family string) bool {
	if strings.Contains(family, "iPad") || strings.Contains(family, "Kindle") || strings.Contains(family, "Tablet") {
		return true
	}
	if strings.Contains(ua, "iPad") || strings.Contains(ua, "Kindle") || strings.Contains(ua, "Silk/") {
		return true
	}
	// "Tablet PC 2.0" is a marker old Windows desktops send in every header.
	lower := strings.ToLower(ua)
	if strings.Contains(lower, "tablet") && !strings.Contains(lower, "tablet pc") {
		return true
	}
	// Android phones say "Mobile"; Android tablets leave it out.
	return os == "Android" && !strings.Contains(ua, "Mobile")
}

func isPhoneFamily(family string) bool {
	switch family {
	case "iPhone", "iPod", "Generic Smartphone", "Generic Feature Phone":
		return true
	}
	return false
}
