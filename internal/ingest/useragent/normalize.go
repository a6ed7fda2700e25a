package useragent

import (
	"strings"
)

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

// Markers of device classes in a header, beyond what uap-core's families
// say: consoles and TVs first (a TV box runs Android without "Mobile", an
// Xbox says "Windows Phone"), then laptops that run Android, then tablets.
var (
	consoleMarkers = mustFilter(`(?i)playstation|xbox|nintendo|\bouya\b|gamepad|bunjalloo|\bpsp\b|ps vita|steam deck`)
	tvMarkers      = mustFilter(`(?i)smart-?tv|hbbtv|\btv\b|[_ -]tv[_ ;)/-]|tv ?box|\broku|crkey|\baft[a-z]{1,4}\b|bravia|` +
		`google ?tv|android ?tv|web0s|netcast|\bdtv\b|webtv|apple ?tv|tvos|opera tv|\bkylo/|espial|viera|aquos|nettv|` +
		`\bmitv|freebox|chromecast|fire ?tv|ce-html|vidaa|tizen[^;)]{0,20}tv|mibox|\bstb\b|set-?top|\bdvb\b`)
	laptopMarkers = mustFilter(`(?i)chromebook|elitebook|probook|\baspire\b|latitude|netbook|satellite|thinkpad|ideapad|` +
		`matebook|\bnuc\d|bilimbook|remix mini`)
	tabletMarkers = mustFilter(`(?i)ipad|kindle|silk/|\bkf[a-z]{2,4}\b|tablet|\btab\b|[_ -]tab[_ \d;)-]|tab\d|mediapad|` +
		`\bpad\b|[_ -]pad[_ \d;)-]|lenovo ?tb|\btb-|sm-[tpx]\d|gt-p\d|gt-n[58]\d|xoom|transformer|nexus (?:7|9|10)\b|` +
		`pixel (?:c|tablet)\b|playbook|archos \d|iplay|galaxy tab`)
)

// device classifies the hardware from the raw header, the normalised OS and
// uap-core's device family. uap-core names models ("Samsung SM-X700") rather
// than classes, so the header's own markers decide most cases.
func device(ua, lower, os, family string) string {
	switch {
	case consoleMarkers.match(ua, lower):
		return Console
	case tvMarkers.match(ua, lower):
		return TV
	case laptopMarkers.match(ua, lower):
		return Desktop
	case isTablet(ua, lower, os, family):
		return Tablet
	case strings.Contains(ua, "Mobi") || os == "iOS" || os == "Android" || isPhoneFamily(family):
		return Mobile
	case desktopOS[os] || desktopPlatform.match(ua, lower):
		return Desktop
	default:
		return ""
	}
}

// desktopPlatform names desktop systems uap-core leaves unnamed.
var desktopPlatform = mustFilter(`X11|Macintosh|Windows NT|Win(?:95|98|dows 9[58])|AmigaOS|Amiga-|BeOS|Haiku|IRIX|` +
	`MorphOS|OS/2|SunOS|Inferno|RISC OS|Syllable|CYGWIN|Mac_PowerPC|Linux x86_64|Linux i686|; Linux\)|` +
	`\(win(?:7|8|10|11) x(?:64|86)\)`)

func isTablet(ua, lower, os, family string) bool {
	if strings.Contains(family, "iPad") || strings.Contains(family, "Kindle") || strings.Contains(family, "Tablet") {
		return true
	}
	// "Tablet PC 2.0" is a marker old Windows desktops send in every header.
	if strings.Contains(ua, "Tablet PC") {
		ua = strings.ReplaceAll(ua, "Tablet PC", "")
		lower = fold(ua)
	}
	if tabletMarkers.match(ua, lower) {
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
