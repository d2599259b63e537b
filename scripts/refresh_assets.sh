#!/usr/bin/env bash
# Refresh the dashboard's third-party assets from the npm registry.
#
#   bash scripts/refresh_assets.sh            # the pinned versions below
#   HTMX_VERSION=2.0.11 CHARTJS_VERSION=4.5.1 bash scripts/refresh_assets.sh
#
# Each asset is the unmodified release file of a pinned version, taken from
# `npm pack` (the registry's tarball, integrity-checked by npm) and copied as
# is into the package's static/vendor/ with its license.  vendor/ASSETS.txt
# lists name, version, file, sha256 and license; the tests check the files
# against it.  Needs npm and sha256sum.  Pages never load anything from
# elsewhere: no CDN, no third-party request.
set -euo pipefail

HTMX_VERSION=${HTMX_VERSION:-2.0.11}
CHARTJS_VERSION=${CHARTJS_VERSION:-4.5.1}

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vendor="$repo_root/src/cogworker/app/web/static/vendor"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# fetch PACKAGE VERSION: unpack the registry tarball into $work/PACKAGE
fetch() {
  (cd "$work" && npm pack --silent "$1@$2" >/dev/null)
  mkdir -p "$work/$1"
  tar -xzf "$work/$1-$2.tgz" -C "$work/$1"
}

fetch htmx.org "$HTMX_VERSION"
fetch chart.js "$CHARTJS_VERSION"

mkdir -p "$vendor"
cp "$work/htmx.org/package/dist/htmx.min.js" "$vendor/htmx.min.js"
cp "$work/htmx.org/package/LICENSE" "$vendor/LICENSE.htmx.txt"
cp "$work/chart.js/package/dist/chart.umd.min.js" "$vendor/chart.umd.min.js"
cp "$work/chart.js/package/LICENSE.md" "$vendor/LICENSE.chart.js.txt"

sum() { sha256sum "$vendor/$1" | cut -d' ' -f1; }
{
  echo "# Third-party files shipped with the dashboard: unmodified npm release files."
  echo "# Refreshed by scripts/refresh_assets.sh; the tests check every sha256."
  echo "# name	version	file	sha256	license	license file"
  printf 'htmx.org\t%s\thtmx.min.js\t%s\t0BSD\tLICENSE.htmx.txt\n' "$HTMX_VERSION" "$(sum htmx.min.js)"
  printf 'chart.js\t%s\tchart.umd.min.js\t%s\tMIT\tLICENSE.chart.js.txt\n' \
    "$CHARTJS_VERSION" "$(sum chart.umd.min.js)"
} >"$vendor/ASSETS.txt"
echo "refreshed: htmx.org $HTMX_VERSION, chart.js $CHARTJS_VERSION -> $vendor"
