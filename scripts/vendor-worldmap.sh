#!/usr/bin/env bash
# vendor-worldmap.sh refreshes the world map of the dashboard's locations
# card: it downloads world-atlas (Natural Earth's country boundaries as
# TopoJSON, keyed by ISO 3166-1 numeric code) and i18n-iso-countries (the
# numeric → alpha-2 table) from the npm registry, runs the generator
# (internal/web/worldmap/gen) on them, and copies both licences beside the
# generated internal/web/worldmap/data/countries.txt.
#
# Usage: scripts/vendor-worldmap.sh [WORLD_ATLAS_VERSION [I18N_ISO_COUNTRIES_VERSION]]
#        (default: the pinned versions below)
#
# After a refresh: update the versions and the size in
# internal/web/worldmap/data/README.md, run `go test ./internal/web/...`,
# and look at the map. A country the generator cannot name (a new feature
# without a numeric code, a code the table lacks) stops it: decide where
# its visitors are counted (gen/main.go, unnumbered).
set -euo pipefail

ATLAS="world-atlas@${1:-2.0.2}"
CODES="i18n-iso-countries@${2:-7.14.0}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${repo}/internal/web/worldmap/data"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

command -v npm >/dev/null || { echo "vendor-worldmap: npm is required" >&2; exit 1; }

for pkg in "${ATLAS}" "${CODES}"; do
	dir="${tmp}/${pkg%@*}"
	mkdir -p "${dir}"
	(cd "${dir}" && npm pack --silent "${pkg}" >/dev/null)
	tar -xzf "${dir}"/*.tgz -C "${dir}"
done
topology="${tmp}/world-atlas/package/countries-110m.json"
codes="${tmp}/i18n-iso-countries/package/codes.json"
for f in "${topology}" "${codes}" "${tmp}/world-atlas/package/LICENSE" "${tmp}/i18n-iso-countries/package/LICENSE"; do
	[ -f "${f}" ] || { echo "vendor-worldmap: no ${f#"${tmp}"/}" >&2; exit 1; }
done

# Generate into the temporary directory first: a failure leaves the tree as it was.
(cd "${repo}" && go run ./internal/web/worldmap/gen -topology "${topology}" -codes "${codes}" \
	-source "${ATLAS} (countries-110m.json, Natural Earth 1:110m) and ${CODES} (codes.json)" \
	-out "${tmp}/countries.txt")

mkdir -p "${dest}"
cp "${tmp}/countries.txt" "${dest}/countries.txt"
cp "${tmp}/world-atlas/package/LICENSE" "${dest}/LICENSE.world-atlas"
cp "${tmp}/i18n-iso-countries/package/LICENSE" "${dest}/LICENSE.i18n-iso-countries"
echo "vendored ${ATLAS} and ${CODES}: $(grep -c '^[A-Z][A-Z] ' "${dest}/countries.txt") countries, $(wc -c <"${dest}/countries.txt") bytes"
