#!/usr/bin/env bash
# vendor-uap-core.sh refreshes the uap-core data that internal/ingest/useragent
# embeds: regexes.yaml (browser, OS and device rules, which the uap-go parser
# loads) and LICENSE into internal/ingest/useragent/data/uap-core/, and the
# project's own test fixtures (tests/test_ua.yaml, tests/test_os.yaml) into
# internal/ingest/useragent/testdata/uap-core/, which the agreement test reads.
#
# Usage: scripts/vendor-uap-core.sh [REF]   (a commit or branch of
# github.com/ua-parser/uap-core; default: the pinned commit below)
#
# uap-core tags releases rarely (its npm package lags master by years of
# rules), so tally pins a commit. After a refresh: update the commit and date
# in internal/ingest/useragent/data/uap-core/README.md, run
# `go test ./internal/ingest/useragent/`, and review the diff.
set -euo pipefail

REF="${1:-e3c5e634bee0b14f1a129c991483910739ad9f6c}"
BASE="https://raw.githubusercontent.com/ua-parser/uap-core/${REF}"

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
data="${repo}/internal/ingest/useragent/data/uap-core"
fixtures="${repo}/internal/ingest/useragent/testdata/uap-core"
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT

for f in regexes.yaml LICENSE tests/test_ua.yaml tests/test_os.yaml; do
	mkdir -p "${tmp}/$(dirname "${f}")"
	curl -fsSL --retry 3 -o "${tmp}/${f}" "${BASE}/${f}" || { echo "vendor-uap-core: cannot download ${f} at ${REF}" >&2; exit 1; }
done
# Fail before touching the tree if the rules are not uap-core's three lists.
for key in user_agent_parsers os_parsers device_parsers; do
	grep -q "^${key}:" "${tmp}/regexes.yaml" || { echo "vendor-uap-core: regexes.yaml has no ${key}" >&2; exit 1; }
done
grep -q "^test_cases:" "${tmp}/tests/test_ua.yaml" || { echo "vendor-uap-core: test_ua.yaml has no test_cases" >&2; exit 1; }

mkdir -p "${data}" "${fixtures}"
cp "${tmp}/regexes.yaml" "${tmp}/LICENSE" "${data}/"
cp "${tmp}/tests/test_ua.yaml" "${tmp}/tests/test_os.yaml" "${tmp}/LICENSE" "${fixtures}/"
echo "vendored uap-core ${REF}: $(grep -c 'regex:' "${data}/regexes.yaml") rules"
