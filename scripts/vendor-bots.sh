#!/usr/bin/env bash
# vendor-bots.sh refreshes the bot lists that internal/ingest/useragent embeds
# and the public corpora its tests measure them (and the device classes)
# against.
#
#   data/crawler-user-agents/  crawler-user-agents (MIT): bot patterns by tag
#   data/isbot/                isbot (Unlicense): broad patterns of the long tail
#   testdata/matomo/           Matomo device-detector fixtures (LGPL-3.0, tests only)
#   testdata/user-agents/      user-agents (BSD-2-Clause): real browsers' headers
#   testdata/top-user-agents/  top-user-agents (MIT): the most common headers
#
# Usage: scripts/vendor-bots.sh
# The versions are pinned below; change them, run the script, then
# `go test ./internal/ingest/useragent/`, update
# internal/ingest/useragent/data/README.md and review the diff.
# Needs npm, node, curl and tar.
set -euo pipefail

CRAWLER_USER_AGENTS=1.60.0
ISBOT=5.2.3
USER_AGENTS=2.1.198
TOP_USER_AGENTS=2.1.138
MATOMO=3856a28692d45317d3f15f6f81ca31a06067182a

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ua="${repo}/internal/ingest/useragent"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

# unpack NAME VERSION: the npm package's files into ${tmp}/NAME.
unpack() {
	mkdir -p "${tmp}/$1"
	(cd "${tmp}" && npm pack --silent "$1@$2" >/dev/null) || { echo "vendor-bots: cannot fetch $1@$2" >&2; exit 1; }
	tar -xzf "${tmp}/$1-$2.tgz" -C "${tmp}/$1" --strip-components=1
}

unpack crawler-user-agents "${CRAWLER_USER_AGENTS}"
unpack isbot "${ISBOT}"
unpack user-agents "${USER_AGENTS}"
unpack top-user-agents "${TOP_USER_AGENTS}"
for f in Tests/fixtures/bots.yml Tests/fixtures/desktop.yml Tests/fixtures/smartphone.yml Tests/fixtures/tablet.yml \
	Tests/fixtures/tv.yml Tests/fixtures/console.yml Tests/Parser/Client/fixtures/browser.yml LICENSE; do
	curl -fsSL --retry 3 -o "${tmp}/matomo-$(basename "${f}")" \
		"https://raw.githubusercontent.com/matomo-org/device-detector/${MATOMO}/${f}" ||
		{ echo "vendor-bots: cannot download ${f} at ${MATOMO}" >&2; exit 1; }
done

# Derive the lists before touching the tree, so a changed layout fails here.
node -e 'const l = require(process.argv[1]).list;
	if (!Array.isArray(l) || l.length < 100) throw new Error("isbot: no pattern list");
	process.stdout.write(JSON.stringify(l, null, 1) + "\n")' "${tmp}/isbot/index.js" >"${tmp}/isbot.json"
node -e 'const d = require(process.argv[1]);
	const u = [...new Set(d.map((x) => x.userAgent))].sort();
	if (u.length < 500) throw new Error("user-agents: too few headers");
	process.stdout.write(JSON.stringify(u, null, 1) + "\n")' "${tmp}/user-agents/dist/user-agents.json" >"${tmp}/user-agents.json"
node -e 'const l = require(process.argv[1]);
	if (!l.every((p) => p.pattern && p.instances)) throw new Error("crawler-user-agents: unexpected layout")' \
	"${tmp}/crawler-user-agents/crawler-user-agents.json"

mkdir -p "${ua}/data/crawler-user-agents" "${ua}/data/isbot" "${ua}/testdata/matomo" "${ua}/testdata/user-agents" "${ua}/testdata/top-user-agents"
cp "${tmp}/crawler-user-agents/crawler-user-agents.json" "${tmp}/crawler-user-agents/LICENSE" "${ua}/data/crawler-user-agents/"
cp "${tmp}/isbot.json" "${ua}/data/isbot/patterns.json"
cp "${tmp}/isbot/LICENSE" "${ua}/data/isbot/LICENSE"
cp "${tmp}/user-agents.json" "${tmp}/user-agents/LICENSE" "${ua}/testdata/user-agents/"
cp "${tmp}/top-user-agents/src/index.json" "${ua}/testdata/top-user-agents/top-user-agents.json"
cp "${tmp}/top-user-agents/LICENSE.md" "${ua}/testdata/top-user-agents/"
for f in bots desktop smartphone tablet tv console browser; do cp "${tmp}/matomo-${f}.yml" "${ua}/testdata/matomo/${f}.yml"; done
cp "${tmp}/matomo-LICENSE" "${ua}/testdata/matomo/LICENSE"
echo "vendored crawler-user-agents ${CRAWLER_USER_AGENTS}, isbot ${ISBOT}; corpora user-agents ${USER_AGENTS}, top-user-agents ${TOP_USER_AGENTS}, device-detector ${MATOMO}"
